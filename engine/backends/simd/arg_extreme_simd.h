// ArgMax / ArgMin of float32 along one axis, with Highway for the running CPU's best SIMD: a vector
// of inner positions at a time, each compared along the axis.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// at[i] = the a in [0, dim) of the largest (smallest, when !max) row[a * inner + i], for i in
// [0, n): the first one, or the last with `last`; a NaN is never taken (nothing compares greater
// than it, nor it greater than anything), as ONNX's reference compares.
void ArgExtremeFloatRows(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at);

}  // namespace tilebank::engine
