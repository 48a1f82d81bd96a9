// engine/backends/simd/window_pool.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/window_pool.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <limits>

#include "engine/backends/simd/window_pool.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kMax, class V>
HWY_INLINE V Fold(V acc, V x) {
  return kMax ? hn::Max(acc, x) : hn::Add(acc, x);
}

// Vectors of D's lanes (at most `width`), four at a time (four independent chains of folds), then
// one at a time; the last one overlaps the one before where `width` is not a multiple, so that no
// lane past the row is read or written.
template <bool kMax, class D>
void Line(D d, const PoolLine& p, float* out) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), width = p.width;
  const auto start = kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  for (int64_t ow = 0; ow < p.w.out; ++ow, out += width) {
    const int64_t w0 = p.w.First(ow), w1 = p.w.End(ow);
    const int64_t divisor = p.pad_divisor ? p.pad_divisor : p.line_count * (w1 - w0);
    const auto scale = hn::Set(d, divisor > 0 ? 1.f / static_cast<float>(divisor) : 0.f);
    int64_t c = 0;
    for (; c + 4 * N <= width; c += 4 * N) {
      auto a0 = start, a1 = start, a2 = start, a3 = start;
      for (int64_t l = 0; l < p.line_count; ++l) {
        const float* row = p.lines[l] + w0 * width + c;
        for (int64_t iw = w0; iw < w1; ++iw, row += width) {
          a0 = Fold<kMax>(a0, hn::LoadU(d, row));
          a1 = Fold<kMax>(a1, hn::LoadU(d, row + N));
          a2 = Fold<kMax>(a2, hn::LoadU(d, row + 2 * N));
          a3 = Fold<kMax>(a3, hn::LoadU(d, row + 3 * N));
        }
      }
      if (!kMax) a0 = hn::Mul(a0, scale), a1 = hn::Mul(a1, scale), a2 = hn::Mul(a2, scale), a3 = hn::Mul(a3, scale);
      hn::StoreU(a0, d, out + c), hn::StoreU(a1, d, out + c + N), hn::StoreU(a2, d, out + c + 2 * N), hn::StoreU(a3, d, out + c + 3 * N);
    }
    while (c < width) {
      c = std::min(c, width - N);
      auto acc = start;
      for (int64_t l = 0; l < p.line_count; ++l) {
        const float* row = p.lines[l] + w0 * width + c;
        for (int64_t iw = w0; iw < w1; ++iw, row += width) acc = Fold<kMax>(acc, hn::LoadU(d, row));
      }
      hn::StoreU(kMax ? acc : hn::Mul(acc, scale), d, out + c);
      c += N;
    }
  }
}

template <bool kMax>
void LineOfWidth(const PoolLine& p, float* out) {
  const hn::ScalableTag<float> full;
  if (p.width >= static_cast<int64_t>(hn::Lanes(full))) return Line<kMax>(full, p, out);
  if (p.width >= 8) return Line<kMax>(hn::CappedTag<float, 8>(), p, out);
  if (p.width >= 4) return Line<kMax>(hn::CappedTag<float, 4>(), p, out);
  return Line<kMax>(hn::CappedTag<float, 1>(), p, out);
}

void PoolLineVectors(bool max, const PoolLine& p, float* out) { max ? LineOfWidth<true>(p, out) : LineOfWidth<false>(p, out); }

// Lanes at, at + 2, at + 4, ... (2 Lanes(d) floats read from `at`).
template <class D>
HWY_INLINE hn::VFromD<D> EvenLanes(D d, const float* at) {
#if HWY_TARGET == HWY_SCALAR
  return hn::LoadU(d, at);
#else
  return hn::ConcatEven(d, hn::LoadU(d, at + hn::Lanes(d)), hn::LoadU(d, at));
#endif
}

// Folds the lines into the scratch from `i` in vectors of D's lanes while a whole one fits; returns
// where it stopped.
template <bool kMax, class D>
HWY_INLINE int64_t FoldLines(D d, const PoolPlane& p, int64_t i) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (; i + N <= p.w.in; i += N) {
    auto acc = hn::LoadU(d, p.lines[0] + i);
    for (int64_t l = 1; l < p.line_count; ++l) acc = Fold<kMax>(acc, hn::LoadU(d, p.lines[l] + i));
    hn::StoreU(acc, d, p.scratch + i);
  }
  return i;
}

// Lanes at + 1, at + 3, at + 5, ... (2 Lanes(d) floats read from `at`).
template <class D>
HWY_INLINE hn::VFromD<D> OddLanes(D d, const float* at) {
#if HWY_TARGET == HWY_SCALAR
  return hn::LoadU(d, at + 1);
#else
  return hn::ConcatOdd(d, hn::LoadU(d, at + hn::Lanes(d)), hn::LoadU(d, at));
#endif
}

// Tap j of N outputs' windows from `start` at stride 2: the even or odd lanes of the 2N floats from
// start + j rounded down to even, so that no float past the last window's is read.
template <class D>
HWY_INLINE hn::VFromD<D> StrideTwoTap(D d, const float* row, int64_t start, int64_t j) {
  const float* at = row + start + (j & ~int64_t{1});
  return j & 1 ? OddLanes(d, at) : EvenLanes(d, at);
}

// One vector of D's lanes of outputs from `o`, where their windows lie inside the line and the
// stride is 1 or 2 (stride 2's lanes gathered from two loads); false, nothing written, elsewhere.
template <bool kMax, class D>
HWY_INLINE bool OutputVector(D d, const float* row, const PoolAxis& w, float scale, int64_t o, float* out) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), k = w.kernel, s = w.stride, start = o * s - w.pad;
  // The end of what it reads: stride 1 loads N from start + k - 1; stride 2 loads 2N from start + k - 1
  // rounded down to even (a 2x2 window's N outputs read exactly their 2N inputs).
  const int64_t end = s == 1 ? start + k - 1 + N : start + ((k - 1) & ~int64_t{1}) + 2 * N;
  if (!((s == 1 || s == 2) && N > 1 && o + N <= w.out && start >= 0 && end <= w.in)) return false;
  auto acc = s == 1 ? hn::LoadU(d, row + start) : StrideTwoTap(d, row, start, 0);
  for (int64_t j = 1; j < k; ++j) acc = Fold<kMax>(acc, s == 1 ? hn::LoadU(d, row + start + j) : StrideTwoTap(d, row, start, j));
  hn::StoreU(kMax ? acc : hn::Mul(acc, hn::Set(d, scale)), d, out + o);
  return true;
}

// The lines folded into one (the scratch) where there are several; then along W: vectors of
// outputs whose windows lie inside the line, the CPU's widest, then 8 and 4 lanes (a line of 14, or
// a vector's tail), and one output at a time elsewhere (the pads' edges, other strides).
template <bool kMax>
void PlaneLine(const PoolPlane& p, float* out) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 8> d8;
  const hn::CappedTag<float, 4> d4;
  const float* row = p.lines[0];
  if (p.line_count > 1) {
    int64_t i = FoldLines<kMax>(d4, p, FoldLines<kMax>(d8, p, FoldLines<kMax>(d, p, 0)));
    for (; i < p.w.in; ++i) {
      float acc = p.lines[0][i];
      for (int64_t l = 1; l < p.line_count; ++l) acc = kMax ? std::max(acc, p.lines[l][i]) : acc + p.lines[l][i];
      p.scratch[i] = acc;
    }
    row = p.scratch;
  }
  const PoolAxis& w = p.w;
  const float inner_scale = 1.f / static_cast<float>(p.pad_divisor ? p.pad_divisor : p.line_count * w.kernel);
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), N8 = static_cast<int64_t>(hn::Lanes(d8)), N4 = static_cast<int64_t>(hn::Lanes(d4));
  for (int64_t o = 0; o < w.out;) {
    if (OutputVector<kMax>(d, row, w, inner_scale, o, out)) {
      o += N;
    } else if (N8 < N && OutputVector<kMax>(d8, row, w, inner_scale, o, out)) {
      o += N8;
    } else if (N4 < N8 && OutputVector<kMax>(d4, row, w, inner_scale, o, out)) {
      o += N4;
    } else {
      const int64_t w0 = w.First(o), w1 = w.End(o);
      float acc = row[w0];
      for (int64_t i = w0 + 1; i < w1; ++i) acc = kMax ? std::max(acc, row[i]) : acc + row[i];
      const int64_t divisor = p.pad_divisor ? p.pad_divisor : p.line_count * (w1 - w0);
      out[o] = kMax ? acc : acc * (1.f / static_cast<float>(divisor));
      ++o;
    }
  }
}

void PoolPlaneVectors(bool max, const PoolPlane& p, float* out) { max ? PlaneLine<true>(p, out) : PlaneLine<false>(p, out); }

// dst[i] = the fold of src[t][i] over t < count, for i < n.
template <bool kMax>
void FoldSpans(const float* const* src, int64_t count, int64_t n, float* dst) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto acc = hn::LoadU(d, src[0] + i);
    for (int64_t t = 1; t < count; ++t) acc = Fold<kMax>(acc, hn::LoadU(d, src[t] + i));
    hn::StoreU(acc, d, dst + i);
  }
  for (; i < n; ++i) {
    float acc = src[0][i];
    for (int64_t t = 1; t < count; ++t) acc = kMax ? std::max(acc, src[t][i]) : acc + src[t][i];
    dst[i] = acc;
  }
}

// dst[i] = the fold of src[i + t] over t < k (times reciprocal[i] where given), for i < n.
template <bool kMax>
void FoldShifted(const float* src, int64_t k, int64_t n, const float* reciprocal, float* dst) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto acc = hn::LoadU(d, src + i);
    for (int64_t t = 1; t < k; ++t) acc = Fold<kMax>(acc, hn::LoadU(d, src + i + t));
    hn::StoreU(reciprocal ? hn::Mul(acc, hn::LoadU(d, reciprocal + i)) : acc, d, dst + i);
  }
  for (; i < n; ++i) {
    float acc = src[i];
    for (int64_t t = 1; t < k; ++t) acc = kMax ? std::max(acc, src[i + t]) : acc + src[i + t];
    dst[i] = reciprocal ? acc * reciprocal[i] : acc;
  }
}

template <bool kMax>
void SamePlaneOf(const SamePlane& p, const float* in, float* out) {
  const PoolAxis &h = p.h, &w = p.w;
  const int64_t W = w.in;
  float* columns = p.scratch;  // columns[o * W + j]: the fold of input column j over output row o's rows
  const float* rows[kSamePlaneKernel];
  // Output rows whose window lies inside the plane: one span of whole rows, a pass per tap.
  const int64_t inner_begin = std::min(h.pad, h.out), inner_end = std::max(inner_begin, h.in - (h.kernel - 1 - h.pad));
  if (inner_end > inner_begin) {
    for (int64_t t = 0; t < h.kernel; ++t) rows[t] = in + (inner_begin - h.pad + t) * W;
    FoldSpans<kMax>(rows, h.kernel, (inner_end - inner_begin) * W, columns + inner_begin * W);
  }
  for (int64_t o = 0; o < h.out; ++o) {
    if (o >= inner_begin && o < inner_end) continue;
    int64_t count = 0;
    for (int64_t r = h.First(o); r < h.End(o); ++r) rows[count++] = in + r * W;
    FoldSpans<kMax>(rows, count, W, columns + o * W);
  }
  // Along the plane as one line: right wherever the window stays inside its row.
  const int64_t right = w.kernel - 1 - w.pad;  // taps right of the output position
  const int64_t total = h.out * W, first = std::min(w.pad, total), last = std::max(first, total - right);
  FoldShifted<kMax>(columns + first - w.pad, w.kernel, last - first, p.reciprocal ? p.reciprocal + first : nullptr, out + first);
  // The columns whose window crosses the row's ends, again within the row.
  for (int64_t o = 0; o < h.out; ++o) {
    const float* row = columns + o * W;
    for (int64_t q = 0; q < W; ++q) {
      if (q >= w.pad && q + right < W) {
        q = std::max(q, W - right - 1);
        continue;
      }
      const int64_t c0 = w.First(q), c1 = w.End(q);
      float acc = row[c0];
      for (int64_t c = c0 + 1; c < c1; ++c) acc = kMax ? std::max(acc, row[c]) : acc + row[c];
      out[o * W + q] = p.reciprocal ? acc * p.reciprocal[o * W + q] : acc;
    }
  }
}

void SamePlaneVectors(bool max, const SamePlane& p, const float* in, float* out) { max ? SamePlaneOf<true>(p, in, out) : SamePlaneOf<false>(p, in, out); }

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(PoolLineVectors);
HWY_EXPORT(PoolPlaneVectors);
HWY_EXPORT(SamePlaneVectors);

bool TakesSamePlane(const PoolAxis& h, const PoolAxis& w) {
  auto same = [](const PoolAxis& a) { return a.stride == 1 && a.out == a.in && a.kernel <= kSamePlaneKernel && a.pad >= 0 && a.pad < a.kernel; };
  return same(h) && same(w) && h.in > 0 && w.in > 0;
}

void PoolSamePlane(bool max, const SamePlane& plane, const float* in, float* out) { HWY_DYNAMIC_DISPATCH(SamePlaneVectors)(max, plane, in, out); }

void PoolLineRows(bool max, const PoolLine& line, float* out) {
  if (line.width <= 0 || line.w.out <= 0) return;
  HWY_DYNAMIC_DISPATCH(PoolLineVectors)(max, line, out);
}

void PoolPlaneLine(bool max, const PoolPlane& line, float* out) {
  if (line.line_count <= 0 || line.w.out <= 0) return;
  HWY_DYNAMIC_DISPATCH(PoolPlaneVectors)(max, line, out);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
