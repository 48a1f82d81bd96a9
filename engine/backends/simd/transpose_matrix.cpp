// engine/backends/simd/transpose_matrix.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/transpose_matrix.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>

#include "engine/backends/simd/transpose_matrix.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int64_t kBlock = 16;  // a cache block's side: 16 rows read, 16 written

#if HWY_TARGET == HWY_SCALAR
constexpr int64_t kTile = 1;  // no 4-lane vectors: one float at a time
#else
constexpr int64_t kTile = 4;
#endif

void Transpose(const float* HWY_RESTRICT in, int64_t in_stride, int64_t rows, int64_t cols, float* HWY_RESTRICT out, int64_t out_stride) {
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
    const int64_t r1 = std::min(rows, r0 + kBlock), r_tiles = r0 + (r1 - r0) / kTile * kTile;
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      // The columns the tiles cover; none without them (the edge loop below then takes every one).
      const int64_t c1 = std::min(cols, c0 + kBlock), c_tiles = kTile > 1 ? c0 + (c1 - c0) / kTile * kTile : c0;
      for (int64_t r = r0; r < r_tiles; r += kTile) {
#if HWY_TARGET != HWY_SCALAR
        const hn::Full128<float> d;  // 4 lanes: a 4 x 4 tile is four vectors
        for (int64_t c = c0; c < c_tiles; c += 4) {
          // Row k of the tile read: in column c + k, rows r..r+3 (a b c d for k = 0..3).
          const auto a = hn::LoadU(d, in + c * in_stride + r), b = hn::LoadU(d, in + (c + 1) * in_stride + r);
          const auto e = hn::LoadU(d, in + (c + 2) * in_stride + r), f = hn::LoadU(d, in + (c + 3) * in_stride + r);
          const auto ab_lo = hn::InterleaveLower(d, a, b), ef_lo = hn::InterleaveLower(d, e, f);  // a0 b0 a1 b1, e0 f0 e1 f1
          const auto ab_hi = hn::InterleaveUpper(d, a, b), ef_hi = hn::InterleaveUpper(d, e, f);  // a2 b2 a3 b3, e2 f2 e3 f3
          hn::StoreU(hn::ConcatLowerLower(d, ef_lo, ab_lo), d, out + r * out_stride + c);
          hn::StoreU(hn::ConcatUpperUpper(d, ef_lo, ab_lo), d, out + (r + 1) * out_stride + c);
          hn::StoreU(hn::ConcatLowerLower(d, ef_hi, ab_hi), d, out + (r + 2) * out_stride + c);
          hn::StoreU(hn::ConcatUpperUpper(d, ef_hi, ab_hi), d, out + (r + 3) * out_stride + c);
        }
#endif
        for (int64_t rr = r; rr < r + kTile; ++rr)
          for (int64_t c = c_tiles; c < c1; ++c) out[rr * out_stride + c] = in[c * in_stride + rr];
      }
      for (int64_t r = r_tiles; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) out[r * out_stride + c] = in[c * in_stride + r];
    }
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(Transpose);

void TransposeMatrix(const float* in, int64_t in_stride, int64_t rows, int64_t cols, float* out, int64_t out_stride) {
  HWY_DYNAMIC_DISPATCH(Transpose)(in, in_stride, rows, cols, out, out_stride);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
