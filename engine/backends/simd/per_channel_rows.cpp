// engine/backends/simd/per_channel_rows.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/per_channel_rows.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backends/simd/per_channel_rows.h"
#include "engine/backends/simd/bf16-inl.h"
#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// An affine map's y = x * a + b, and the activation after it.
template <PerChannelMap kMap, class D>
HWY_INLINE hn::Vec<D> ApplyAffine(D d, hn::Vec<D> x, hn::Vec<D> a, hn::Vec<D> b) {
  const auto y = hn::MulAdd(x, a, b);
  if constexpr (kMap == PerChannelMap::kAffineRelu) return hn::Max(y, hn::Zero(d));
  if constexpr (kMap == PerChannelMap::kAffineSwish) return hn::Mul(y, SigmoidOf(d, y));
  return y;
}

// A binary map's y = x op a (kAdd, kSub, kMul, kDiv).
template <PerChannelMap kMap, class V>
HWY_INLINE V ApplyBinary(V x, V a) {
  if constexpr (kMap == PerChannelMap::kAdd) return hn::Add(x, a);
  if constexpr (kMap == PerChannelMap::kSub) return hn::Sub(x, a);
  if constexpr (kMap == PerChannelMap::kMul) return hn::Mul(x, a);
  if constexpr (kMap == PerChannelMap::kDiv) return hn::Div(x, a);
}

template <PerChannelMap kMap, class D>
HWY_INLINE hn::Vec<D> Apply(D d, hn::Vec<D> x, const float* a, const float* b) {
  const auto va = hn::LoadU(d, a);
  if constexpr (kMap == PerChannelMap::kAffine || kMap == PerChannelMap::kAffineRelu || kMap == PerChannelMap::kAffineSwish)
    return ApplyAffine<kMap>(d, x, va, hn::LoadU(d, b));
  else
    return ApplyBinary<kMap>(x, va);
}

// The lanes past `valid` of a partial vector are computed from zeros and not stored (a Div's by 1).
template <PerChannelMap kMap, class In, class Out>
void Rows(const In* x, Out* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = valid / N * N;
  const size_t rest = static_cast<size_t>(valid - whole);
  // The tail's channel values, zero-padded once (a and b hold `valid` values only).
  HWY_ALIGN float tail_a[HWY_MAX_BYTES / sizeof(float)] = {}, tail_b[HWY_MAX_BYTES / sizeof(float)] = {};
  for (int64_t j = whole; j < valid; ++j) tail_a[j - whole] = a[j], tail_b[j - whole] = b[j];
  if constexpr (kMap == PerChannelMap::kDiv)
    for (int64_t j = valid - whole; j < N; ++j) tail_a[j] = 1.f;
  for (int64_t r = 0; r < rows; ++r, x += width, y += width) {
    int64_t j = 0;
    for (; j < whole; j += N) StoreAs(d, Apply<kMap>(d, LoadAs(d, x + j), a + j, b + j), y + j);
    if (j < valid) StoreTailAs(d, Apply<kMap>(d, LoadTailAs(d, x + j, rest, 0.f), tail_a, tail_b), y + j, rest);
    for (int64_t k = valid; k < width; ++k) y[k] = Out{0};
  }
}

template <class In, class Out>
void MapRowsOf(PerChannelMap map, const In* x, Out* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  switch (map) {
    case PerChannelMap::kAdd: return Rows<PerChannelMap::kAdd>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kSub: return Rows<PerChannelMap::kSub>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kMul: return Rows<PerChannelMap::kMul>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kDiv: return Rows<PerChannelMap::kDiv>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kAffine: return Rows<PerChannelMap::kAffine>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kAffineRelu: return Rows<PerChannelMap::kAffineRelu>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kAffineSwish: return Rows<PerChannelMap::kAffineSwish>(x, y, rows, width, valid, a, b);
  }
}

// One exported function per pair of element types (HWY_EXPORT takes no templates).
void MapRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  MapRowsOf(map, x, y, rows, width, valid, a, b);
}
void MapRowsFromBf16(PerChannelMap map, const uint16_t* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  MapRowsOf(map, x, y, rows, width, valid, a, b);
}
void MapRowsToBf16(PerChannelMap map, const float* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  MapRowsOf(map, x, y, rows, width, valid, a, b);
}
void MapRowsBf16(PerChannelMap map, const uint16_t* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  MapRowsOf(map, x, y, rows, width, valid, a, b);
}

template <PerChannelMap kMap>
void RowValueRows(const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* g) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = valid / N * N;
  const size_t rest = static_cast<size_t>(valid - whole);
  for (int64_t r = 0; r < rows; ++r, x += width, y += width) {
    const auto vg = hn::Set(d, g[r]);
    int64_t j = 0;
    for (; j < whole; j += N) hn::StoreU(ApplyBinary<kMap>(hn::LoadU(d, x + j), vg), d, y + j);
    if (j < valid) StoreTail(d, ApplyBinary<kMap>(LoadTail(d, x + j, rest, 0.f), vg), y + j, rest);
    for (int64_t k = valid; k < width; ++k) y[k] = 0.f;
  }
}

void MapRowValueRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* g) {
  switch (map) {
    case PerChannelMap::kAdd: return RowValueRows<PerChannelMap::kAdd>(x, y, rows, width, valid, g);
    case PerChannelMap::kSub: return RowValueRows<PerChannelMap::kSub>(x, y, rows, width, valid, g);
    case PerChannelMap::kMul: return RowValueRows<PerChannelMap::kMul>(x, y, rows, width, valid, g);
    case PerChannelMap::kDiv: return RowValueRows<PerChannelMap::kDiv>(x, y, rows, width, valid, g);
    default: return;
  }
}

template <PerChannelFold kFold>
void EachRowFolded(const float* x, int64_t rows, int64_t width, int64_t valid, float* out, bool combine) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = valid / N * N;
  const size_t rest = static_cast<size_t>(valid - whole);
  constexpr bool kMax = kFold == PerChannelFold::kMax;
  const float start = kMax ? -std::numeric_limits<float>::infinity() : 0.f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t r = 0; r < rows; ++r, x += width) {
    auto acc = hn::Set(d, start);
    auto nans = hn::Zero(d);  // kMax: all bits set in a lane that met a NaN (x86's max passes over one)
    auto fold = [&](hn::Vec<decltype(d)> v) {
      if constexpr (kMax) {
        acc = hn::Max(acc, v);
        nans = hn::Or(nans, hn::VecFromMask(d, hn::Not(hn::Eq(v, v))));
      } else {
        acc = hn::Add(acc, v);
      }
    };
    int64_t j = 0;
    for (; j < whole; j += N) fold(hn::LoadU(d, x + j));
    if (j < valid) fold(LoadTail(d, x + j, rest, start));
    float v = hn::GetLane(kMax ? hn::MaxOfLanes(d, acc) : hn::SumOfLanes(d, acc));
    if (kMax && !hn::AllFalse(d, hn::MaskFromVec(nans))) v = nan;
    if (!combine) out[r] = v;
    else if (!kMax) out[r] += v;
    else out[r] = std::isnan(out[r]) || std::isnan(v) ? nan : std::max(out[r], v);
  }
}

void FoldEachRowSimd(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* out, bool combine) {
  if (fold == PerChannelFold::kMax) EachRowFolded<PerChannelFold::kMax>(x, rows, width, valid, out, combine);
  else EachRowFolded<PerChannelFold::kSum>(x, rows, width, valid, out, combine);
}

template <PerChannelMap kMap>
void AffineRun(const float* x, float* y, int64_t count, float a, float b) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  int64_t k = 0;
  for (; k + N <= count; k += N) hn::StoreU(ApplyAffine<kMap>(d, hn::LoadU(d, x + k), va, vb), d, y + k);
  if (k < count) {
    const size_t rest = static_cast<size_t>(count - k);
    StoreTail(d, ApplyAffine<kMap>(d, LoadTail(d, x + k, rest, 0.f), va, vb), y + k, rest);
  }
}

void MapRun(PerChannelMap map, const float* x, float* y, int64_t count, float a, float b) {
  switch (map) {
    case PerChannelMap::kAffineRelu: return AffineRun<PerChannelMap::kAffineRelu>(x, y, count, a, b);
    case PerChannelMap::kAffineSwish: return AffineRun<PerChannelMap::kAffineSwish>(x, y, count, a, b);
    default: return AffineRun<PerChannelMap::kAffine>(x, y, count, a, b);
  }
}

// One row's vector v folded into the accumulator a (m: the lanes' means, kSquaredDeviation).
template <PerChannelFold kFold, class V>
HWY_INLINE V Fold(V a, V v, V m) {
  if constexpr (kFold == PerChannelFold::kMax) return hn::Max(a, v);
  if constexpr (kFold == PerChannelFold::kSum) return hn::Add(a, v);
  const V deviation = hn::Sub(v, m);
  return hn::MulAdd(deviation, deviation, a);
}

// Channels go down every row four vectors at a time (four cache lines a row on AVX-512), the rest
// one vector at a time, the accumulators in registers. A partial vector's lanes past `valid` are
// loaded as 0 and not stored.
template <PerChannelFold kFold, class In>
void FoldRows(const In* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto means = [&](int64_t j, size_t count) {
    if (kFold != PerChannelFold::kSquaredDeviation) return hn::Zero(d);
    return count == static_cast<size_t>(N) ? hn::LoadU(d, mean + j) : LoadTail(d, mean + j, count, 0.f);
  };
  int64_t j = 0;
  for (; j + 4 * N <= valid; j += 4 * N) {
    auto a0 = hn::LoadU(d, acc + j), a1 = hn::LoadU(d, acc + j + N), a2 = hn::LoadU(d, acc + j + 2 * N), a3 = hn::LoadU(d, acc + j + 3 * N);
    const auto m0 = means(j, N), m1 = means(j + N, N), m2 = means(j + 2 * N, N), m3 = means(j + 3 * N, N);
    const In* p = x + j;
    for (int64_t r = 0; r < rows; ++r, p += width) {
      a0 = Fold<kFold>(a0, LoadAs(d, p), m0);
      a1 = Fold<kFold>(a1, LoadAs(d, p + N), m1);
      a2 = Fold<kFold>(a2, LoadAs(d, p + 2 * N), m2);
      a3 = Fold<kFold>(a3, LoadAs(d, p + 3 * N), m3);
    }
    hn::StoreU(a0, d, acc + j), hn::StoreU(a1, d, acc + j + N), hn::StoreU(a2, d, acc + j + 2 * N), hn::StoreU(a3, d, acc + j + 3 * N);
  }
  for (; j < valid; j += N) {
    const size_t count = static_cast<size_t>(std::min<int64_t>(N, valid - j));
    const bool whole = count == static_cast<size_t>(N);
    auto a = whole ? hn::LoadU(d, acc + j) : LoadTail(d, acc + j, count, 0.f);
    const auto m = means(j, count);
    const In* p = x + j;
    for (int64_t r = 0; r < rows; ++r, p += width) a = Fold<kFold>(a, whole ? LoadAs(d, p) : LoadTailAs(d, p, count, 0.f), m);
    if (whole) hn::StoreU(a, d, acc + j);
    else StoreTail(d, a, acc + j, count);
  }
}

template <class In>
void FoldPerChannelOf(PerChannelFold fold, const In* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  switch (fold) {
    case PerChannelFold::kMax: return FoldRows<PerChannelFold::kMax>(x, rows, width, valid, acc, mean);
    case PerChannelFold::kSum: return FoldRows<PerChannelFold::kSum>(x, rows, width, valid, acc, mean);
    case PerChannelFold::kSquaredDeviation: return FoldRows<PerChannelFold::kSquaredDeviation>(x, rows, width, valid, acc, mean);
  }
}
void FoldPerChannel(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  FoldPerChannelOf(fold, x, rows, width, valid, acc, mean);
}
void FoldPerChannelBf16(PerChannelFold fold, const uint16_t* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  FoldPerChannelOf(fold, x, rows, width, valid, acc, mean);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(MapRows);
HWY_EXPORT(MapRowsFromBf16);
HWY_EXPORT(MapRowsToBf16);
HWY_EXPORT(MapRowsBf16);

void MapPerChannelRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRows)(map, x, y, rows, width, valid, a, b ? b : a);
}
void MapPerChannelRows(PerChannelMap map, const uint16_t* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRowsFromBf16)(map, x, y, rows, width, valid, a, b ? b : a);
}
void MapPerChannelRows(PerChannelMap map, const float* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRowsToBf16)(map, x, y, rows, width, valid, a, b ? b : a);
}
void MapPerChannelRows(PerChannelMap map, const uint16_t* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRowsBf16)(map, x, y, rows, width, valid, a, b ? b : a);
}

HWY_EXPORT(MapRowValueRows);
HWY_EXPORT(FoldEachRowSimd);

void FoldEachRow(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* out, bool combine) {
  if (rows > 0 && valid > 0) HWY_DYNAMIC_DISPATCH(FoldEachRowSimd)(fold, x, rows, width, valid, out, combine);
}

void MapRowsByRowValue(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* g) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRowValueRows)(map, x, y, rows, width, valid, g);
}

HWY_EXPORT(FoldPerChannel);
HWY_EXPORT(FoldPerChannelBf16);
HWY_EXPORT(MapRun);

void MapAffineRun(PerChannelMap map, const float* x, float* y, int64_t count, float a, float b) {
  if (count > 0) HWY_DYNAMIC_DISPATCH(MapRun)(map, x, y, count, a, b);
}

void ReducePerChannelRows(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  if (rows > 0 && valid > 0) HWY_DYNAMIC_DISPATCH(FoldPerChannel)(fold, x, rows, width, valid, acc, mean);
}
void ReducePerChannelRows(PerChannelFold fold, const uint16_t* x, int64_t rows, int64_t width, int64_t valid, float* acc, const float* mean) {
  if (rows > 0 && valid > 0) HWY_DYNAMIC_DISPATCH(FoldPerChannelBf16)(fold, x, rows, width, valid, acc, mean);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
