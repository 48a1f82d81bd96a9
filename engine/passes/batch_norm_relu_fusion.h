// Inference BatchNormalization followed by Relu, where the norm cannot fold into a convolution before
// it (DenseNet's norm before each convolution, a norm after a Concat or an Add), becomes one
// FusedBatchNormalization node: tilebank's own op, BatchNormalization's inputs and attributes and
// "activation" Relu. Its kernels make one pass where there were two: x * scale + shift, then max(0),
// row-major in the arena (engine/kernels/float32_arena_kernels.cpp) or as oneDNN's binary with a
// Relu post-op in a layout family (engine/backends/onednn/onednn_layout_ops.h). Only float32 nodes
// of static shape whose scale, B, mean and var are constants, and a norm output nothing else reads.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding, which folds the norms that follow a
// convolution into it); returns how many pairs it fused.
size_t FuseBatchNormRelu(Graph* graph);

}  // namespace tilebank::engine::model
