// engine/backends/simd/vector_product.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
//
// A tile of up to four vectors of outputs is accumulated over the inputs two at a time (eight
// chains in flight, for the multiply-add's latency), then goes through the epilogue in a block on
// the stack and is copied out: the padded lanes past `out` are never stored.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/vector_product.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/vector_product.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kMaxTile = 4;  // vectors of outputs a tile keeps in registers
constexpr size_t kMaxLanes = 16;

#if !HWY_HAVE_SCALABLE  // a tile holds arrays of vectors, which sizeless vector types cannot be

// One row's TILE vectors of outputs from o: accumulated, through the epilogue, stored.
template <int TILE, class D>
HWY_INLINE void Tile(D d, const VectorProductShape& s, const float* HWY_RESTRICT x, const float* HWY_RESTRICT packed, const ConvEpilogue& e,
                     const float* residual, float* y, int64_t o) {
  const size_t N = hn::Lanes(d);
  const int64_t stride = s.out_padded();
  hn::Vec<D> even[TILE], odd[TILE];
  for (int t = 0; t < TILE; ++t) {
    even[t] = e.bias ? hn::LoadU(d, e.bias + o + t * N) : hn::Zero(d);
    odd[t] = hn::Zero(d);
  }
  const float* w = packed + o;
  int64_t c = 0;
  for (; c + 2 <= s.in; c += 2, w += 2 * stride) {
    const auto x0 = hn::Set(d, x[c]), x1 = hn::Set(d, x[c + 1]);
    for (int t = 0; t < TILE; ++t) {
      even[t] = hn::MulAdd(x0, hn::LoadU(d, w + t * N), even[t]);
      odd[t] = hn::MulAdd(x1, hn::LoadU(d, w + stride + t * N), odd[t]);
    }
  }
  if (c < s.in) {
    const auto x0 = hn::Set(d, x[c]);
    for (int t = 0; t < TILE; ++t) even[t] = hn::MulAdd(x0, hn::LoadU(d, w + t * N), even[t]);
  }
  HWY_ALIGN float block[kMaxTile * kMaxLanes];
  HWY_ALIGN float residual_block[kMaxTile * kMaxLanes];
  for (int t = 0; t < TILE; ++t) hn::Store(hn::Add(even[t], odd[t]), d, block + t * N);
  const int64_t count = std::min<int64_t>(static_cast<int64_t>(TILE * N), s.out - o);  // the outputs past `out` are padding
  const float* tile_residual = residual ? residual + o : nullptr;
  if (residual && count < static_cast<int64_t>(TILE * N)) {  // copied to a whole block: the residual has no padding to read
    std::memset(residual_block, 0, sizeof(residual_block));
    std::memcpy(residual_block, residual + o, static_cast<size_t>(count) * sizeof(float));
    tile_residual = residual_block;
  }
  ApplyConvEpilogueToBlock(d, block, TILE, e, tile_residual, N);
  std::memcpy(y + o, block, static_cast<size_t>(count) * sizeof(float));
}

#else  // a vector at a time

template <int TILE, class D>
HWY_INLINE void Tile(D d, const VectorProductShape& s, const float* HWY_RESTRICT x, const float* HWY_RESTRICT packed, const ConvEpilogue& e,
                     const float* residual, float* y, int64_t o) {
  static_assert(TILE == 1, "sizeless vectors: one at a time");
  const size_t N = hn::Lanes(d);
  auto acc = e.bias ? hn::LoadU(d, e.bias + o) : hn::Zero(d);
  for (int64_t c = 0; c < s.in; ++c) acc = hn::MulAdd(hn::Set(d, x[c]), hn::LoadU(d, packed + c * s.out_padded() + o), acc);
  const int64_t count = std::min<int64_t>(static_cast<int64_t>(N), s.out - o);
  const auto mask = hn::FirstN(d, static_cast<size_t>(count));
  for (const ConvEpilogueStep& step : e.steps)
    acc = step.kind == ConvEpilogueStep::Kind::kAddResidual ? hn::Add(acc, hn::MaskedLoad(mask, d, residual + o)) : ApplyConvEpilogueStep(d, acc, step, nullptr);
  hn::BlendedStore(acc, mask, d, y + o);
}

#endif  // !HWY_HAVE_SCALABLE

template <class D>
void RowsOf(D d, const VectorProductShape& s, const float* x, const float* packed, const ConvEpilogue& e, float* y, int64_t o_begin, int64_t o_end) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t end = std::min(o_end, s.out);
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row_x = x + r * s.in;
    float* row_y = y + r * s.out;
    const float* row_residual = e.residual ? e.residual + r * s.out : nullptr;
    int64_t o = o_begin;
#if HWY_HAVE_SCALABLE
    for (; o < end; o += N) Tile<1>(d, s, row_x, packed, e, row_residual, row_y, o);
#else
    // Whole tiles while four vectors are left, the last of them maybe partly padding (52 outputs
    // are four vectors of 16), then the one to three vectors left.
    for (; (end - o + N - 1) / N >= kMaxTile; o += kMaxTile * N) Tile<kMaxTile>(d, s, row_x, packed, e, row_residual, row_y, o);
    switch ((end - o + N - 1) / N) {
      case 3: Tile<3>(d, s, row_x, packed, e, row_residual, row_y, o); break;
      case 2: Tile<2>(d, s, row_x, packed, e, row_residual, row_y, o); break;
      case 1: Tile<1>(d, s, row_x, packed, e, row_residual, row_y, o); break;
      default: break;
    }
#endif
  }
}

void Rows(const VectorProductShape& s, const float* x, const float* packed, const ConvEpilogue& e, float* y, int64_t o_begin, int64_t o_end) {
  const hn::CappedTag<float, kMaxLanes> d;
  RowsOf(d, s, x, packed, e, y, o_begin, o_end);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(Rows);

std::vector<float> PackVectorProductWeights(const VectorProductShape& s, const float* out_major) {
  const int64_t stride = s.out_padded();
  std::vector<float> packed(static_cast<size_t>(s.in * stride), 0.f);
  for (int64_t o = 0; o < s.out; ++o)
    for (int64_t c = 0; c < s.in; ++c) packed[static_cast<size_t>(c * stride + o)] = out_major[o * s.in + c];
  return packed;
}

void VectorProduct(const VectorProductShape& s, const float* x, const float* packed, const ConvEpilogue& e, float* y, int64_t o_begin, int64_t o_end) {
  HWY_DYNAMIC_DISPATCH(Rows)(s, x, packed, e, y, o_begin, o_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
