// y = f(x, a[c], b[c]) over rows of channels (engine/backends/onednn/channel_rows.h), with Highway
// for the running CPU's best SIMD: a squeeze-and-excitation scale (x * s[c]), a per-channel Add,
// Sub or Div, an inference BatchNormalization (x * scale[c] + shift[c], Relu after it or not), a
// normalization's affine map with SiLU after it; and the rows folded into one value per channel (a
// global pool's max or sum, a norm's sums of x and of squared deviations).
#pragma once
#include <cstdint>

namespace tilebank::engine {

enum class PerChannelMap { kAdd, kSub, kMul, kDiv, kAffine, kAffineRelu, kAffineSwish };
enum class PerChannelFold { kMax, kSum, kSquaredDeviation };

// For each of `rows` rows of `width` floats (x and y advance by `width` a row; y may be x): lanes
// j < valid get f(x[j], a[j], b[j]) (b used by the affine maps only; null: a), lanes from valid to width 0.
void MapPerChannelRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b);
// The same with x or y (or both) in bfloat16, as uint16_t bits (a value handed over narrow between
// steps computing in bf16): read widened, computed in float32, written rounded to nearest even.
void MapPerChannelRows(PerChannelMap map, const uint16_t* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b);
void MapPerChannelRows(PerChannelMap map, const float* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b);
void MapPerChannelRows(PerChannelMap map, const uint16_t* x, uint16_t* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b);

// For each of `rows` rows of `width` floats: lanes j < valid get f(x[j], g[r]), one operand value
// per row (kAdd, kSub, kMul or kDiv: a per-position map's value over a position's channels), lanes
// from valid to width 0.
void MapRowsByRowValue(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* g);

// out[r] = the fold of row r's lanes j < valid (kMax: the largest, NaN where one is; kSum: the sum)
// for each of `rows` rows of `width` floats; with `combine`, folded into out[r] as it holds (the
// next channel block).
void FoldEachRow(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* out, bool combine);

// y[k] = f(x[k], a, b) for k < count, one channel's contiguous run of a row-major tensor (an affine
// map: kAffine, kAffineRelu or kAffineSwish; y may be x).
void MapAffineRun(PerChannelMap map, const float* x, float* y, int64_t count, float a, float b);

// For each lane j < valid, over `rows` rows of `width` floats (x advances by `width` a row):
// acc[j] = max(acc[j], x[j] of every row) (kMax), acc[j] + their sum (kSum), or acc[j] + the sum of
// (x[j] - mean[j])^2 (kSquaredDeviation; `mean` holds `valid` values).
void ReducePerChannelRows(PerChannelFold fold, const float* x, int64_t rows, int64_t width, int64_t valid, float* acc,
                          const float* mean = nullptr);
// The same over x in bfloat16 (uint16_t bits), folded in float32.
void ReducePerChannelRows(PerChannelFold fold, const uint16_t* x, int64_t rows, int64_t width, int64_t valid, float* acc,
                          const float* mean = nullptr);

}  // namespace tilebank::engine
