// 1-D convolution networks (a TCN, an audio encoder's feature extractor, a Conv1d text model) run as
// 2-D ones of height 1. Each 1-D Conv, with the nodes around it that work the same with one spatial
// axis more (elementwise ops, norms over channels, 1-D pooling, a channel Concat), reads and writes
// [N, C, 1, L] where it read [N, C, L]: its kernel, strides, dilations and pads gain a leading 1 (or
// 0), its weights [M, C/group, k] become [M, C/group, 1, k], and an operand broadcast against such a
// value gains the same axis before its last. The tuned 2-D path then takes the region: SGAT's fusions
// (the activation and the residual Add as post-ops), its layout families (channels-last along the
// whole chain, where the registry's 1-D convolution reordered in and out on every call) and OPAT's
// templates. Where the region meets the rest of the graph, a Reshape (an alias: nothing copied)
// goes between. Only float32 values of static shape are lifted.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding and pad_conv_fusion.h, which folds a causal
// Conv1d's left Pad into its pads); returns how many nodes now run in 2-D.
size_t LiftConv1d(Graph* graph);

}  // namespace tilebank::engine::model
