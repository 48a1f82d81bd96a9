// The product of a few rows with a weight matrix, the convolution epilogue on the accumulators:
// y[r][o] = epilogue(bias[o] + sum_c x[r][c] w[c][o]). A convolution with one output pixel (the
// squeeze-excitation's two convolutions) is one: oneDNN spends microseconds setting up a primitive
// run for what is here a few hundred cycles. Hand-written with Highway for the running CPU's best
// SIMD (chosen at run time): up to four vectors of outputs at a time in registers.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

// Outputs are padded to a multiple of kVectorProductPad (the widest vector), the padding's weights
// and bias zero.
inline constexpr int64_t kVectorProductPad = 16;

struct VectorProductShape {
  int64_t rows = 0, in = 0, out = 0;  // x [rows][in], y [rows][out]
  int64_t out_padded() const { return (out + kVectorProductPad - 1) / kVectorProductPad * kVectorProductPad; }
};

// Weights given [out][in] (a convolution's OIHW, a transposed Gemm's B) as the kernel reads them:
// [in][out_padded].
std::vector<float> PackVectorProductWeights(const VectorProductShape& s, const float* out_major);

// Outputs [o_begin, o_end) of every row (o_begin a multiple of kVectorProductPad); `packed` from
// PackVectorProductWeights; e.bias out_padded values or null; e.residual [rows][out] like y, or
// null. y must not overlap x; it may be the residual.
void VectorProduct(const VectorProductShape& s, const float* x, const float* packed, const ConvEpilogue& e, float* y, int64_t o_begin, int64_t o_end);

}  // namespace tilebank::engine
