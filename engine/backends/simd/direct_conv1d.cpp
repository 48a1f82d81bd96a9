// engine/backends/simd/direct_conv1d.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
//
// A block of OCB output channels by COLS vectors of output columns keeps OCB x COLS accumulators in
// registers (8 x 3 with 32 vector registers, 4 x 3 with 16); for each input channel and tap, the
// COLS input vectors are loaded once and each of the block's weights is broadcast into them. A
// group's last channels (fewer than a block) take blocks of 4, 2 and 1.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/direct_conv1d.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/direct_conv1d.h"
#include "engine/backends/simd/unroll-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;

constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float) > 0 ? HWY_MAX_BYTES / sizeof(float) : 1;
constexpr int kRegisters = HWY_MAX_BYTES >= 64 ? 32 : 16;
// The widest block of output channels: as many accumulators as leave room for the inputs.
constexpr int kWidestBlock = kRegisters >= 32 ? 8 : 4;
// Vectors of output columns a block of OCB channels keeps (at most 4).
template <int OCB>
constexpr int ColumnsOf() {
  return std::min(4, std::max(1, (kRegisters - 4) / OCB));
}
int64_t VectorLanes() { return static_cast<int64_t>(hn::Lanes(D())); }

// Output value y (bias included) of `count` lanes through the epilogue into out: whole vectors
// stored, a last partial one through a buffer so that nothing past `count` is read or written.
HWY_INLINE void Emit(D d, hn::Vec<D> y, const ConvEpilogue& e, float* out, const float* residual, int64_t count) {
  if (count >= static_cast<int64_t>(hn::Lanes(d))) {
    hn::StoreU(ApplyConvEpilogue(d, y, e, residual), d, out);
    return;
  }
  HWY_ALIGN float r[kMaxLanes] = {}, o[kMaxLanes];
  if (residual) std::copy(residual, residual + count, r);
  hn::Store(ApplyConvEpilogue(d, y, e, residual ? r : nullptr), d, o);
  std::copy(o, o + count, out);
}

// What the blocks of one range of columns share.
struct RangeContext {
  const Conv1dGeometry* g;
  const float* window;   // input channel 0 of the group, at the range's first output column's first tap
  int64_t window_stride;  // between input channels
  const int64_t* taps;   // where each tap of output column x reads: window + c * window_stride + taps[tap] + x
  const float* weights;  // the block's packed [c / groups][k][8]
  const float* bias;     // the block's first channel's bias, or null
  const ConvEpilogue* e;
  float* out;            // the block's first channel, the range's first column
  const float* residual;  // likewise, or null
};

#if !HWY_HAVE_SCALABLE  // blocks hold arrays of vectors, which sizeless vector types cannot be

// OCB channels (from `first` of the block) by COLS vectors of columns from x, `valid` of them real.
template <int OCB, int COLS>
HWY_INLINE void Block(const RangeContext& t, int first, int64_t x, int64_t valid) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), ow = t.g->ow, k = t.g->k, cg = t.g->c_per_group();
  constexpr auto kChannels = std::make_integer_sequence<int, OCB>();
  constexpr auto kColumns = std::make_integer_sequence<int, COLS>();
  // Unrolled at compile time, so that the accumulators live in registers.
  hn::Vec<D> acc[OCB][COLS];
  Unroll(kChannels, [&](auto o) HWY_ATTR {
    const auto b = t.bias ? hn::Set(d, t.bias[first + o]) : hn::Zero(d);
    Unroll(kColumns, [&](auto v) HWY_ATTR { acc[o][v] = b; });
  });
  const float* w = t.weights + first;
  for (int64_t c = 0; c < cg; ++c) {
    const float* row = t.window + c * t.window_stride + x;
    for (int64_t tap = 0; tap < k; ++tap, w += kConv1dChannelBlock) {
      const float* at = row + t.taps[tap];
      hn::Vec<D> in[COLS];
      Unroll(kColumns, [&](auto v) HWY_ATTR { in[v] = hn::LoadU(d, at + v * N); });
      Unroll(kChannels, [&](auto o) HWY_ATTR {
        const auto wv = hn::Set(d, w[o]);
        Unroll(kColumns, [&](auto v) HWY_ATTR { acc[o][v] = hn::MulAdd(wv, in[v], acc[o][v]); });
      });
    }
  }
  // Out of registers before the epilogue, whose calls would otherwise keep them in memory all along.
  HWY_ALIGN float sums[OCB * COLS * kMaxLanes];
  Unroll(kChannels, [&](auto o) HWY_ATTR { Unroll(kColumns, [&](auto v) HWY_ATTR { hn::Store(acc[o][v], d, sums + (o * COLS + v) * N); }); });
  for (int o = 0; o < OCB; ++o)
    for (int v = 0; v < COLS && v * N < valid; ++v) {
      const int64_t at = (first + o) * ow + x + v * N;
      Emit(d, hn::Load(d, sums + (o * COLS + v) * N), *t.e, t.out + at, t.residual ? t.residual + at : nullptr, valid - v * N);
    }
}

// A block of OCB channels by `vectors` (at most COLS) vectors of columns from x, `valid` of them
// real.
template <int OCB, int COLS>
HWY_INLINE void Rest(const RangeContext& t, int first, int64_t x, int64_t valid, int64_t vectors) {
  if (vectors == COLS) return Block<OCB, COLS>(t, first, x, valid);
  if constexpr (COLS > 1) Rest<OCB, COLS - 1>(t, first, x, valid, vectors);
}

// Channels [first, first + OCB) of the block over the range's `cols` columns: blocks of COLS
// vectors, the last as few as are left.
template <int OCB>
HWY_INLINE void Channels(const RangeContext& t, int first, int64_t cols) {
  constexpr int COLS = ColumnsOf<OCB>();
  const int64_t N = static_cast<int64_t>(hn::Lanes(D())), step = COLS * N;
  int64_t x = 0;
  for (; x + step <= cols; x += step) Block<OCB, COLS>(t, first, x, step);
  if (x < cols) Rest<OCB, COLS>(t, first, x, cols - x, (cols - x + N - 1) / N);
}

#else

// Sizeless vectors: one output value at a time.
template <int OCB>
HWY_INLINE void Channels(const RangeContext& t, int first, int64_t cols) {
  const Conv1dGeometry& g = *t.g;
  const D d;
  for (int o = first; o < first + OCB; ++o)
    for (int64_t x = 0; x < cols; ++x) {
      float s = t.bias ? t.bias[o] : 0.f;
      for (int64_t c = 0; c < g.c_per_group(); ++c)
        for (int64_t tap = 0; tap < g.k; ++tap)
          s += t.window[c * t.window_stride + x + t.taps[tap]] * t.weights[(c * g.k + tap) * kConv1dChannelBlock + o];
      Emit(d, hn::Set(d, s), *t.e, t.out + o * g.ow + x, t.residual ? t.residual + o * g.ow + x : nullptr, 1);
    }
}

#endif  // !HWY_HAVE_SCALABLE

// Where the blocks of output columns [x_begin, x_end) of one image's group read their input: t's
// window, window_stride and taps (k of them, in `taps`). In place where the stride is 1 and the window
// lies inside the row; else a zero-bordered copy in `copy` (grown, never shrunk: per thread, at most
// the group's channels by a range's window), each input channel's row split into `stride` phases
// so that the columns a tap reads for consecutive outputs lie side by side: input column
// start + j * stride + r is phase r's column j, and tap offset o of output x reads phase o % stride,
// column x + o / stride. Phases no tap reads are left as they are.
void PlaceWindow(const Conv1dGeometry& g, const float* group_src, int64_t x_begin, int64_t x_end, std::vector<int64_t>* taps,
                 std::vector<float>* copy, RangeContext* t) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(D())), stride = g.stride, cols = x_end - x_begin, cg = g.c_per_group();
  // The input columns read, from `start`: the range's outputs' and a vector's past them (the last
  // vector's lanes past the range), each `reach` columns past its first tap.
  const int64_t start = x_begin * stride - g.pad_left, reach = (g.k - 1) * g.dilation, span = (cols + N) * stride + reach;
  taps->resize(static_cast<size_t>(g.k));
  if (stride == 1 && start >= 0 && start + span <= g.w) {
    t->window = group_src + start;
    t->window_stride = g.w;
    for (int64_t tap = 0; tap < g.k; ++tap) (*taps)[static_cast<size_t>(tap)] = tap * g.dilation;
    t->taps = taps->data();
    return;
  }
  const int64_t phase_cols = cols + N + reach / stride + 1, phase_stride = (phase_cols + 15) / 16 * 16;
  t->window_stride = stride * phase_stride;
  if (copy->size() < static_cast<size_t>(cg * t->window_stride)) copy->resize(static_cast<size_t>(cg * t->window_stride));
  std::vector<bool> read(static_cast<size_t>(stride), false);
  for (int64_t tap = 0; tap < g.k; ++tap) {
    const int64_t offset = tap * g.dilation;
    (*taps)[static_cast<size_t>(tap)] = offset % stride * phase_stride + offset / stride;
    read[static_cast<size_t>(offset % stride)] = true;
  }
  for (int64_t r = 0; r < stride; ++r) {
    if (!read[static_cast<size_t>(r)]) continue;
    // Phase columns j whose input column start + j * stride + r lies inside the row: [lo, hi).
    const int64_t first = start + r;
    const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : (-first + stride - 1) / stride, 0, phase_cols);
    const int64_t hi = std::clamp<int64_t>(g.w - first > 0 ? (g.w - first + stride - 1) / stride : 0, lo, phase_cols);
    for (int64_t c = 0; c < cg; ++c) {
      const float* in = group_src + c * g.w + first;
      float* row = copy->data() + c * t->window_stride + r * phase_stride;
      std::fill(row, row + lo, 0.f);
      if (stride == 1 && hi > lo) {
        std::memcpy(row + lo, in + lo, static_cast<size_t>(hi - lo) * sizeof(float));
      } else {
        for (int64_t j = lo; j < hi; ++j) row[j] = in[j * stride];
      }
      std::fill(row + hi, row + phase_cols, 0.f);
    }
  }
  t->window = copy->data();
  t->taps = taps->data();
}

void Columns(const Conv1dGeometry& g, const float* src, const float* packed, const ConvEpilogue& e, float* dst, int64_t image, int64_t group,
             int64_t x_begin, int64_t x_end, int64_t oc_begin, int64_t oc_end) {
  const int64_t cols = x_end - x_begin, cg = g.c_per_group(), ocg = g.oc_per_group(), blocks = (ocg + kConv1dChannelBlock - 1) / kConv1dChannelBlock;
  thread_local std::vector<int64_t> taps;
  thread_local std::vector<float> copy;
  RangeContext t{&g, nullptr, 0, nullptr, nullptr, nullptr, &e, nullptr, nullptr};
  PlaceWindow(g, src + (image * g.c + group * cg) * g.w, x_begin, x_end, &taps, &copy, &t);
  for (int64_t first = oc_begin; first < oc_end; first += kConv1dChannelBlock) {
    const int64_t oc0 = group * ocg + first;
    t.weights = packed + (group * blocks + first / kConv1dChannelBlock) * cg * g.k * kConv1dChannelBlock;
    t.bias = e.bias ? e.bias + oc0 : nullptr;
    t.out = dst + (image * g.oc + oc0) * g.ow + x_begin;
    t.residual = e.residual ? e.residual + (image * g.oc + oc0) * g.ow + x_begin : nullptr;
    const int count = static_cast<int>(std::min<int64_t>(kConv1dChannelBlock, oc_end - first));
    for (int o = 0; o < count;) {
      const int left = count - o;
      if (left >= kWidestBlock) {
        Channels<kWidestBlock>(t, o, cols);
        o += kWidestBlock;
      } else if (left >= 4) {
        Channels<4>(t, o, cols);
        o += 4;
      } else if (left >= 2) {
        Channels<2>(t, o, cols);
        o += 2;
      } else {
        Channels<1>(t, o, cols);
        o += 1;
      }
    }
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(VectorLanes);
HWY_EXPORT(Columns);

std::vector<float> PackConv1dWeights(const Conv1dGeometry& g, const float* weights) {
  const int64_t cg = g.c_per_group(), ocg = g.oc_per_group(), blocks = (ocg + kConv1dChannelBlock - 1) / kConv1dChannelBlock;
  std::vector<float> packed(static_cast<size_t>(g.groups * blocks * cg * g.k * kConv1dChannelBlock), 0.f);
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t o = 0; o < ocg; ++o)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t tap = 0; tap < g.k; ++tap) {
          const int64_t block = group * blocks + o / kConv1dChannelBlock;
          packed[static_cast<size_t>(((block * cg + c) * g.k + tap) * kConv1dChannelBlock + o % kConv1dChannelBlock)] =
              weights[((group * ocg + o) * cg + c) * g.k + tap];
        }
  return packed;
}

int64_t Conv1dVectorLanes() { return HWY_DYNAMIC_DISPATCH(VectorLanes)(); }

void DirectConv1dColumns(const Conv1dGeometry& g, const float* src, const float* packed, const ConvEpilogue& e, float* dst,
                         int64_t image, int64_t group, int64_t x_begin, int64_t x_end, int64_t oc_begin, int64_t oc_end) {
  HWY_DYNAMIC_DISPATCH(Columns)(g, src, packed, e, dst, image, group, x_begin, x_end, oc_begin, oc_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
