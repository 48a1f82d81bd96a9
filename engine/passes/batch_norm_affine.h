// Inference BatchNormalization as a per-channel affine map, read from the graph's constants: what
// constant folding folds into a convolution and what the executor's BatchNormalization step applies.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/channel_affine.h"
#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// Whether `n` is a BatchNormalization in inference mode (training_mode 0) of an input and four
// parameters, writing its output alone (no running mean or variance): what the passes fold or fuse.
bool InferenceBatchNorm(const Graph& g, const Node& n);

// kInvalidInput (naming the node) unless its four parameter inputs are constants of `channels` values.
Result<ChannelAffine> BatchNormAffine(const Graph& graph, const Node& batch_norm, int64_t channels);

}  // namespace tilebank::engine::model
