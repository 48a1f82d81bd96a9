// The float32 arena implementations of InstanceNormalization and GroupNormalization
// (engine/kernels/float32_norm_kernels.cpp), registered with the other arena kernels
// (float32_arena_kernels.cpp) at the end of their ops' tables.
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

// `instance`: InstanceNormalization (a group per channel); else GroupNormalization (num_groups,
// scale and B per channel or, as opset 18 has them, per group) and tilebank's
// FusedGroupNormalization (engine/passes/group_norm_fusion.h), whose "activation" may be Swish
// (SiLU, applied to the normalized values). Made for the node's static shapes.
Result<std::unique_ptr<OpKernel>> Float32GroupedNorm(const KernelInfo& info, bool instance);

}  // namespace tilebank::engine::kernels
