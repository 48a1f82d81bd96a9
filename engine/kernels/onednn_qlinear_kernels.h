// oneDNN's int8 convolution and matmul behind the registry's QLinearConv and QLinearMatMul
// (engine/kernels/onednn_qlinear_kernels.cpp); `reference` computes whatever they cannot take.
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

std::unique_ptr<OpKernel> WrapOneDnnQLinearConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
std::unique_ptr<OpKernel> WrapOneDnnQLinearMatMul(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
// Both take the attribute "onednn_impl": the oneDNN implementation to run (its impl_info_str, as
// OneDnnInt8Implementations lists them; the int8.onednn template's knob), or "reference".
// The names of oneDNN's implementations for this QLinearConv or QLinearMatMul and these operands,
// oneDNN's first choice first, its reference implementations left out.
Result<std::vector<std::string>> OneDnnInt8Implementations(const KernelInfo& info, const KernelInputs& in);

// MatMulInteger(A u8/s8, B s8 [K, N], a_zero_point, b_zero_point 0) on oneDNN's int8 matmul, where
// it is exact (VNNI: int32 sums); `reference` elsewhere.
std::unique_ptr<OpKernel> WrapOneDnnMatMulInteger(const KernelInfo& info, std::unique_ptr<OpKernel> reference);

// DynamicQuantizedMatMul(x_q, W_q [K, N] int8, x_zero, x_scale, w_scale (1 or N)[, bias (N)]) -> float32:
// ((x_q - x_zero) . W_q) * x_scale * w_scale + bias, the QDQ fusion's node for dynamically quantized
// MatMuls (engine/passes/qdq_fusion.h), on oneDNN's int8 matmul (7-bit weights without VNNI).
Result<std::unique_ptr<OpKernel>> MakeDynamicQuantizedMatMul(const KernelInfo& info);

// MaxPool (AveragePool where `average`): float32 of 1 to 3 spatial dimensions on the own pool loop,
// and (max only) u8 or s8 4-D tensors on oneDNN's pooling, channels-last with the "nhwc" attribute
// (engine/kernels/onednn_pool_kernel.cpp); `reference` for anything else.
std::unique_ptr<OpKernel> WrapFastPool(const KernelInfo& info, std::unique_ptr<OpKernel> reference, bool average);

// 8 where oneDNN sums int8 products in int32 (VNNI), else 7: the weights are halved there so that
// vpmaddubsw's int16 pair sums cannot saturate (onednn_qlinear_kernels.cpp).
int Int8WeightBits();

}  // namespace tilebank::engine::kernels
