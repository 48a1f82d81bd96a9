// oneDNN's int8 convolution and matmul behind the registry's QLinearConv and QLinearMatMul
// (engine/kernels/onednn_qlinear_kernels.cpp); `reference` computes whatever they cannot take.
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

std::unique_ptr<OpKernel> WrapOneDnnQLinearConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference);
std::unique_ptr<OpKernel> WrapOneDnnQLinearMatMul(const KernelInfo& info, std::unique_ptr<OpKernel> reference);

// 8 where oneDNN sums int8 products in int32 (VNNI), else 7: the weights are halved there so that
// vpmaddubsw's int16 pair sums cannot saturate (onednn_qlinear_kernels.cpp).
int Int8WeightBits();

}  // namespace tilebank::engine::kernels
