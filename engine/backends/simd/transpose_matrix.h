// The transpose of a float matrix, with Highway for the running CPU's SIMD: the data movement of a
// Transpose that moves the innermost axis (NCHW <-> NHWC permutes around a channels-last
// LayerNorm, attention's head split), one thread's share of it.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// out[r * out_stride + c] = in[c * in_stride + r] for r < rows, c < cols: the cols x rows matrix at
// `in` (its rows in_stride floats apart) into the rows x cols one at `out`. In cache blocks of 16 x
// 16, each made of 4 x 4 tiles transposed in registers (the edges, and everything on a CPU without
// 4-lane vectors, one float at a time). `in` and `out` must not overlap.
void TransposeMatrix(const float* in, int64_t in_stride, int64_t rows, int64_t cols, float* out, int64_t out_stride);

}  // namespace tilebank::engine
