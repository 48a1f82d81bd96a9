// y = f(x, a[c], b[c]) over rows of channels (engine/backends/onednn/channel_rows.h), with Highway
// for the running CPU's best SIMD: a squeeze-and-excitation scale (x * s[c]), a per-channel Add,
// Sub or Div, an inference BatchNormalization (x * scale[c] + shift[c], Relu after it or not); and
// the rows folded into one per channel (a global pool's max or sum).
#pragma once
#include <cstdint>

namespace tilebank::engine {

enum class PerChannelMap { kAdd, kSub, kMul, kDiv, kAffine, kAffineRelu };

// For each of `rows` rows of `width` floats (x and y advance by `width` a row; y may be x): lanes
// j < valid get f(x[j], a[j], b[j]) (b used by the affine maps only; null: a), lanes from valid to width 0.
void MapPerChannelRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b);

// For each lane j < valid: acc[j] = max(acc[j], x[j] of every row), or acc[j] + their sum, over
// `rows` rows of `width` floats (x advances by `width` a row).
void ReducePerChannelRows(bool max, const float* x, int64_t rows, int64_t width, int64_t valid, float* acc);

}  // namespace tilebank::engine
