// The convolution core Conv, ConvInteger and QLinearConv share (engine/kernels/conv_kernels.cpp,
// quantize_kernels.cpp): N-D, grouped, dilated, padded, on doubles.
#pragma once
#include <memory>
#include <vector>

#include "engine/kernels/spatial_window.h"

namespace tilebank::engine::kernels {

struct ConvOperands {
  const TypedTensor* x = nullptr;  // [N, C, D1..Dn]
  const TypedTensor* w = nullptr;  // [M, C / group, k1..kn]
  std::vector<double> x_values, w_values, bias;  // x and w as doubles (zero points taken off); bias per M or empty
};

// The float32 Conv on oneDNN (engine/kernels/onednn_conv_kernel.cpp); `reference` computes what it
// cannot take.
Result<std::unique_ptr<OpKernel>> MakeOneDnnConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference);

// y[N, M, out...] as doubles with the output's shape in *shape; errors name the node.
Result<std::vector<double>> Convolve(const KernelInfo& info, const ConvOperands& operands, std::vector<int64_t>* shape);

}  // namespace tilebank::engine::kernels
