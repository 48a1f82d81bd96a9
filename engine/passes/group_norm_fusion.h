// GroupNorm as torch.onnx writes it below opset 18 (diffusion UNets, wav2vec-style encoders):
// Reshape(x, [N, G, -1]) -> InstanceNormalization (scale 1, B 0) -> Reshape (back to x's shape)
// -> Mul (gamma per channel) -> Add (beta per channel), and the SiLU after it (y * Sigmoid(y)) when
// there is one, becomes one FusedGroupNormalization node: tilebank's own op, x, per-channel scale
// and bias (as opset 21's GroupNormalization has them), num_groups, epsilon and "activation"
// ("Swish" or none). Its float32 arena kernel (engine/kernels/float32_norm_kernels.h) makes one
// pass over the tensor where there were five or seven. Only x float32 of static shape is fused.
#pragma once
#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding: the shapes and constants it reads are
// settled); returns how many group norms it fused.
size_t FuseGroupNorm(Graph* graph);

}  // namespace tilebank::engine::model
