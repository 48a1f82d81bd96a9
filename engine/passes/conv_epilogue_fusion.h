// Convolutions off the tuned templates' path, which take 2-D convolutions with explicit pads
// (engine/core/conv_problem.h; 1-D ones are lifted to 2-D by conv1d_lifting.h): 3-D (a video
// network's) and 1-D ones left unlifted. Such a Conv with the residual
// Add after it (the other operand of the output's own shape) and the activation after that (Relu,
// Sigmoid, Tanh, GELU, SiLU) becomes one FusedConv node: tilebank's own op, inputs X, W, B (or absent)
// and the residual Z (optional), the Conv's attributes and "activation". Its kernel runs both as the
// oneDNN convolution's post-ops (engine/kernels/onednn_conv_kernel.cpp), where the registry ran one
// kernel per node, each reading and writing the whole tensor. Only float32 nodes of static shape,
// and only values nothing else reads, are fused.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding and pad_conv_fusion.h); returns how many
// convolutions took an epilogue.
size_t FuseConvEpilogues(Graph* graph);

}  // namespace tilebank::engine::model
