// oneDNN's int8 convolution and matmul behind the registry's QLinearConv and QLinearMatMul
// (engine/kernels/onednn_qlinear_kernels.cpp); `reference` computes whatever they cannot take.
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

std::unique_ptr<OpKernel> WrapOneDnnQLinearConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
std::unique_ptr<OpKernel> WrapOneDnnQLinearMatMul(const KernelInfo& info, std::unique_ptr<OpKernel> reference);

}  // namespace tilebank::engine::kernels
