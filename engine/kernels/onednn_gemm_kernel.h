// The fast path of FusedGemm (engine/passes/dynamic_gemm_fusion.h): A's rows known only at run time
// times a B the graph holds, on oneDNN's matmul with B packed once into the layout the primitive wants
// (per weights layout asked), the bias and the activation as its post-ops, one primitive per row count
// (oneDNN's own cache keeps its code).
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

// `fallback` computes what oneDNN cannot take (another dtype, an empty dimension, a oneDNN error)
// and reports bad inputs.
std::unique_ptr<OpKernel> MakeOneDnnFusedGemm(const KernelInfo& info, std::unique_ptr<OpKernel> fallback);

}  // namespace tilebank::engine::kernels
