// engine/backends/simd/depthwise_conv_nhwc.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
//
// A row of output is computed in blocks of 8 (4 where at most 4 columns are left), a vector of
// channels at a time, the block's accumulators in registers; a block whose taps all lie inside the
// image reads without checks, one at an edge reads zeros outside it. For 3x3 and 5x5 filters of
// stride 1 or 2 (undilated), each input column of a block's filter row is loaded once and
// multiplied into every output column it reaches; other filters load a tap's input per output
// column. No epilogue, a Relu or a Clip is applied in registers; any other runs over the block a
// step at a time, so that its chain is chosen once per block.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/depthwise_conv_nhwc.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <utility>

#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/depthwise_conv_nhwc.h"
#include "engine/backends/simd/unroll-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kMaxColumns = 8;  // output columns a block keeps in registers
constexpr size_t kMaxLanes = 16;

// What every block of one output row reads: the image's rows the filter reaches, the filter taps
// inside it, and where the row's output and residual go.
struct RowContext {
  const DepthwiseGeometry* g;
  const float* image_src;   // the row's image, NHWC
  const float* weights;     // [kh][kw][c]
  const ConvEpilogue* e;
  float* out_row;           // output column 0 of the row
  const float* residual_row;  // likewise, or null
  int64_t iy0, k_lo, k_hi;  // input row of filter row 0; the filter rows inside the image
  bool in_registers;              // the epilogue is nothing or one Relu or Clip: applied in registers
  const ConvEpilogueStep* single;  // that Relu or Clip, or null
};

// `count` accumulated vectors in `block` (Lanes(d) apart: consecutive output columns of one vector
// of channels, from column ox) through the epilogue into the output.
template <class D>
HWY_INLINE void Finish(D d, const RowContext& r, float* HWY_RESTRICT block, size_t count, int64_t ox, int64_t cv) {
  const int64_t C = r.g->c;
  const size_t N = hn::Lanes(d);
  ApplyConvEpilogueToBlock(d, block, count, *r.e, r.residual_row ? r.residual_row + ox * C + cv : nullptr, static_cast<size_t>(C));
  for (size_t v = 0; v < count; ++v) hn::StoreU(hn::Load(d, block + v * N), d, r.out_row + (ox + static_cast<int64_t>(v)) * C + cv);
}

// One output column, each tap checked against the image's edges.
template <class D>
HWY_INLINE void Column(D d, const RowContext& r, int64_t ox, int64_t cv, float* HWY_RESTRICT block) {
  const DepthwiseGeometry& g = *r.g;
  const int64_t C = g.c;
  auto acc = r.e->bias ? hn::LoadU(d, r.e->bias + cv) : hn::Zero(d);
  const int64_t ix0 = ox * g.sw - g.pad_left;
  for (int64_t k = r.k_lo; k < r.k_hi; ++k) {
    const float* in_row = r.image_src + (r.iy0 + k * g.dh) * g.w * C + cv;
    const float* w_row = r.weights + k * g.kw * C + cv;
    for (int64_t t = 0; t < g.kw; ++t) {
      const int64_t ix = ix0 + t * g.dw;
      if (ix >= 0 && ix < g.w) acc = hn::MulAdd(hn::LoadU(d, in_row + ix * C), hn::LoadU(d, w_row + t * C), acc);
    }
  }
  hn::Store(acc, d, block);
}

#if !HWY_HAVE_SCALABLE  // blocks hold arrays of vectors, which sizeless vector types cannot be

// The first `count` of a block's accumulators (consecutive output columns from ox) through the
// epilogue into the output: in registers, or through `block` and Finish.
template <int COLS, class D>
HWY_INLINE void Emit(D d, const RowContext& r, const hn::Vec<D>* acc, size_t count, int64_t ox, int64_t cv, float* HWY_RESTRICT block) {
  const int64_t C = r.g->c;
  if (r.in_registers) {  // nothing, a Relu or a Clip, as ApplyConvEpilogueStep computes them
    for (int o = 0; o < COLS; ++o)
      if (static_cast<size_t>(o) < count) {
        const auto y = r.single ? ApplyConvEpilogueStep(d, acc[o], *r.single, nullptr) : acc[o];
        hn::StoreU(y, d, r.out_row + (ox + o) * C + cv);
      }
    return;
  }
  const size_t N = hn::Lanes(d);
  for (int o = 0; o < COLS; ++o) hn::Store(acc[o], d, block + o * N);
  Finish(d, r, block, count, ox, cv);
}

// COLS output columns from ox, of a KW-wide filter of stride S (undilated): filter row by filter
// row, input column j loaded once and multiplied into output columns (j - t) / S. CHECKED: input
// columns outside the image read as zeros (a block at an edge), else every one is inside.
template <int KW, int S, int COLS, bool CHECKED, class D>
HWY_INLINE void FixedBlock(D d, const RowContext& r, int64_t ox, int64_t cv, size_t count, float* HWY_RESTRICT block) {
  const DepthwiseGeometry& g = *r.g;
  const int64_t C = g.c;
  hn::Vec<D> acc[COLS];
  const auto bias = r.e->bias ? hn::LoadU(d, r.e->bias + cv) : hn::Zero(d);
  for (int o = 0; o < COLS; ++o) acc[o] = bias;
  const int64_t ix0 = ox * S - g.pad_left;
  for (int64_t k = r.k_lo; k < r.k_hi; ++k) {
    // Offsets, not pointers: input column ix0 may lie before the image (a checked block).
    const int64_t at = ((r.iy0 + k * g.dh) * g.w + ix0) * C + cv;
    const float* w_row = r.weights + k * KW * C + cv;
    hn::Vec<D> w[KW];
    for (int t = 0; t < KW; ++t) w[t] = hn::LoadU(d, w_row + t * C);
    Unroll(std::make_integer_sequence<int, (COLS - 1) * S + KW>(), [&](auto j) HWY_ATTR {
      const int64_t ix = ix0 + decltype(j)::value;
      const auto x = !CHECKED || (ix >= 0 && ix < g.w) ? hn::LoadU(d, r.image_src + (at + decltype(j)::value * C)) : hn::Zero(d);
      Unroll(std::make_integer_sequence<int, KW>(), [&](auto t) HWY_ATTR {
        constexpr int jj = decltype(j)::value, tt = decltype(t)::value;
        if constexpr ((jj - tt) % S == 0 && jj >= tt && (jj - tt) / S < COLS) acc[(jj - tt) / S] = hn::MulAdd(x, w[tt], acc[(jj - tt) / S]);
      });
    });
  }
  Emit<COLS>(d, r, acc, count, ox, cv, block);
}

// COLS output columns from ox of any filter: a tap's weights loaded once for the columns. CHECKED as
// FixedBlock's.
template <int COLS, bool CHECKED, class D>
HWY_INLINE void AnyBlock(D d, const RowContext& r, int64_t ox, int64_t cv, size_t count, float* HWY_RESTRICT block) {
  const DepthwiseGeometry& g = *r.g;
  const int64_t C = g.c, col_step = g.sw * C, tap_step = g.dw * C;
  hn::Vec<D> acc[COLS];
  const auto bias = r.e->bias ? hn::LoadU(d, r.e->bias + cv) : hn::Zero(d);
  for (int o = 0; o < COLS; ++o) acc[o] = bias;
  const int64_t ix0 = ox * g.sw - g.pad_left;
  for (int64_t k = r.k_lo; k < r.k_hi; ++k) {
    const int64_t at = ((r.iy0 + k * g.dh) * g.w + ix0) * C + cv;  // an offset: column ix0 may lie before the image
    const float* w_row = r.weights + k * g.kw * C + cv;
    for (int64_t t = 0; t < g.kw; ++t) {
      const auto wt = hn::LoadU(d, w_row + t * C);
      for (int o = 0; o < COLS; ++o) {
        const int64_t ix = ix0 + o * g.sw + t * g.dw;
        if (!CHECKED || (ix >= 0 && ix < g.w)) acc[o] = hn::MulAdd(hn::LoadU(d, r.image_src + (at + t * tap_step + o * col_step)), wt, acc[o]);
      }
    }
  }
  Emit<COLS>(d, r, acc, count, ox, cv, block);
}

template <int KW, int S, int COLS, bool CHECKED, class D>
HWY_INLINE void Block(D d, const RowContext& r, int64_t ox, int64_t cv, size_t count, float* HWY_RESTRICT block) {
  if constexpr (KW == 0) {
    AnyBlock<COLS, CHECKED>(d, r, ox, cv, count, block);
  } else {
    FixedBlock<KW, S, COLS, CHECKED>(d, r, ox, cv, count, block);
  }
}

// The row's output columns in blocks of 8 (4 where at most 4 are left): unchecked where every tap is
// inside the image ([ox_lo, ox_hi)), checked at the edges.
template <int KW, int S, class D>
HWY_INLINE void BlockedRow(D d, const RowContext& r, int64_t ox_lo, int64_t ox_hi, int64_t c_begin, int64_t c_end, float* HWY_RESTRICT block) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), ow = r.g->ow;
  auto block_at = [&](int64_t ox, int64_t cv) HWY_ATTR {
    const int64_t left = ow - ox;
    const int64_t cols = left <= kMaxColumns / 2 ? kMaxColumns / 2 : kMaxColumns;
    const bool inside = ox >= ox_lo && ox + cols <= ox_hi;
    const size_t count = static_cast<size_t>(std::min(left, cols));
    if (cols == kMaxColumns) {
      inside ? Block<KW, S, kMaxColumns, false>(d, r, ox, cv, count, block) : Block<KW, S, kMaxColumns, true>(d, r, ox, cv, count, block);
    } else {
      inside ? Block<KW, S, kMaxColumns / 2, false>(d, r, ox, cv, count, block) : Block<KW, S, kMaxColumns / 2, true>(d, r, ox, cv, count, block);
    }
    return static_cast<int64_t>(count);
  };
  if (r.g->channels_outer) {
    for (int64_t cv = c_begin; cv < c_end; cv += N)
      for (int64_t ox = 0; ox < ow;) ox += block_at(ox, cv);
    return;
  }
  for (int64_t ox = 0; ox < ow;) {
    int64_t count = 0;
    for (int64_t cv = c_begin; cv < c_end; cv += N) count = block_at(ox, cv);
    ox += count;
  }
}

#endif  // !HWY_HAVE_SCALABLE

// Whether e's chain runs in registers (nothing, one Relu or one Clip), and that step.
inline void InRegistersOf(const ConvEpilogue& e, RowContext* r) {
  using Kind = ConvEpilogueStep::Kind;
  r->single = e.steps.size() == 1 ? &e.steps[0] : nullptr;
  r->in_registers = e.steps.empty() || (r->single && (r->single->kind == Kind::kRelu || r->single->kind == Kind::kClip));
}

// One output row's channels [c_begin, c_end), a vector of D at a time.
template <class D>
void Row(D d, const DepthwiseGeometry& g, const float* src, const float* weights, const ConvEpilogue& e, float* dst, int64_t row, int64_t c_begin,
         int64_t c_end) {
  const int64_t C = g.c;
  RowContext r{&g, src + row / g.oh * g.h * g.w * C, weights, &e, dst + row * g.ow * C, e.residual ? e.residual + row * g.ow * C : nullptr,
               row % g.oh * g.sh - g.pad_top, 0, g.kh, false, nullptr};
  InRegistersOf(e, &r);
  while (r.k_lo < r.k_hi && r.iy0 + r.k_lo * g.dh < 0) ++r.k_lo;
  while (r.k_hi > r.k_lo && r.iy0 + (r.k_hi - 1) * g.dh >= g.h) --r.k_hi;
  // Columns whose every tap is inside the image: ox sw - pad_left >= 0 and ox sw - pad_left + (kw - 1) dw < w.
  const int64_t last_start = g.w - 1 - (g.kw - 1) * g.dw + g.pad_left;
  const int64_t ox_lo = std::min((g.pad_left + g.sw - 1) / g.sw, g.ow);
  const int64_t ox_hi = std::max(ox_lo, std::min(last_start >= 0 ? last_start / g.sw + 1 : 0, g.ow));
  HWY_ALIGN float block[kMaxColumns * kMaxLanes];
#if HWY_HAVE_SCALABLE
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t ox = 0; ox < g.ow; ++ox)
    for (int64_t cv = c_begin; cv < c_end; cv += N) {
      Column(d, r, ox, cv, block);
      Finish(d, r, block, 1, ox, cv);
    }
#else
  const bool undilated = g.dw == 1;
  if (undilated && g.kw == 3 && g.sw == 1) return BlockedRow<3, 1>(d, r, ox_lo, ox_hi, c_begin, c_end, block);
  if (undilated && g.kw == 3 && g.sw == 2) return BlockedRow<3, 2>(d, r, ox_lo, ox_hi, c_begin, c_end, block);
  if (undilated && g.kw == 5 && g.sw == 1) return BlockedRow<5, 1>(d, r, ox_lo, ox_hi, c_begin, c_end, block);
  if (undilated && g.kw == 5 && g.sw == 2) return BlockedRow<5, 2>(d, r, ox_lo, ox_hi, c_begin, c_end, block);
  BlockedRow<0, 0>(d, r, ox_lo, ox_hi, c_begin, c_end, block);
#endif
}

void Rows(const DepthwiseGeometry& g, const float* src, const float* weights, const ConvEpilogue& e, float* dst, int64_t row_begin, int64_t row_end,
          int64_t c_begin, int64_t c_end) {
  // Sixteen lanes where the CPU has them and the channels fill them, eight for the rest.
  const hn::CappedTag<float, 16> d16;
  const hn::CappedTag<float, 8> d8;
  const int64_t wide = hn::Lanes(d16) >= 16 ? c_begin + (c_end - c_begin) / 16 * 16 : c_begin;
  for (int64_t row = row_begin; row < row_end; ++row) {
    if (wide > c_begin) Row(d16, g, src, weights, e, dst, row, c_begin, wide);
    if (c_end > wide) Row(d8, g, src, weights, e, dst, row, wide, c_end);
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(Rows);

std::vector<float> DepthwiseWeightsNhwc(const DepthwiseGeometry& g, const float* weights) {
  std::vector<float> packed(static_cast<size_t>(g.kh * g.kw * g.c));
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t k = 0; k < g.kh * g.kw; ++k) packed[static_cast<size_t>(k * g.c + c)] = weights[c * g.kh * g.kw + k];
  return packed;
}

void DepthwiseConvNhwc(const DepthwiseGeometry& g, const float* src, const float* weights, const ConvEpilogue& e, float* dst, int64_t row_begin,
                       int64_t row_end, int64_t c_begin, int64_t c_end) {
  HWY_DYNAMIC_DISPATCH(Rows)(g, src, weights, e, dst, row_begin, row_end, c_begin, c_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
