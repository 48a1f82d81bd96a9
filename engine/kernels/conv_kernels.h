// The convolution core Conv, ConvInteger and QLinearConv share (engine/kernels/conv_kernels.cpp,
// quantize_kernels.cpp): N-D, grouped, dilated, padded, on doubles.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "engine/kernels/spatial_window.h"

namespace tilebank::engine::kernels {

struct ConvOperands {
  const TypedTensor* x = nullptr;  // [N, C, D1..Dn]
  const TypedTensor* w = nullptr;  // [M, C / group, k1..kn]
  std::vector<double> x_values, w_values, bias;  // x and w as doubles (zero points taken off); bias per M or empty
};

// ConvTranspose's geometry over input spatial dims `in` (W's kernel where kernel_shape is absent):
// pads (begin then end) with auto_pad and output_shape resolved into the begin pads, and the
// output's spatial dims. An error names the node when attributes and shapes disagree or an output
// dim is below 1.
struct TransposedWindow {
  std::vector<int64_t> kernel, strides, dilations, pads, out;
};
Result<TransposedWindow> ResolveTransposed(const KernelInfo& info, const std::vector<int64_t>& in, const std::vector<int64_t>& weight_kernel);

// The float32 Conv and ConvTranspose on oneDNN (engine/kernels/onednn_conv_kernel.cpp): its
// convolution and deconvolution; `reference` computes what they cannot take.
Result<std::unique_ptr<OpKernel>> MakeOneDnnConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
Result<std::unique_ptr<OpKernel>> MakeOneDnnConvTranspose(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
// The float32 ConvTranspose of one group as one GEMM per image and a scatter of its taps
// (engine/kernels/conv_transpose_gemm_kernel.cpp): always where the kernel tiles the output
// (strides = kernel, no pads, dilation 1); for another instance of static shapes where it ran
// faster than the kernel `rival` makes of it (timed once per instance and host, on a kernel of its
// own that holds no constants). `fallback` computes every other instance.
Result<std::unique_ptr<OpKernel>> MakeConvTransposeByGemm(const KernelInfo& info, std::unique_ptr<OpKernel> fallback,
                                                          const std::function<Result<std::unique_ptr<OpKernel>>(const KernelInfo&)>& rival = {});

// y[N, M, out...] as doubles with the output's shape in *shape; errors name the node.
Result<std::vector<double>> Convolve(const KernelInfo& info, const ConvOperands& operands, std::vector<int64_t>* shape);

}  // namespace tilebank::engine::kernels
