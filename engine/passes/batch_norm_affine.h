// Inference BatchNormalization as a per-channel affine map, read from the graph's constants: what
// constant folding folds into a convolution and what the executor's BatchNormalization step applies.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// y = x * scale[c] + shift[c] per channel c: scale = gamma / sqrt(var + epsilon),
// shift = beta - mean * scale.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// kInvalidInput (naming the node) unless its four parameter inputs are constants of `channels` values.
Result<ChannelAffine> BatchNormAffine(const Graph& graph, const Node& batch_norm, int64_t channels);

}  // namespace tilebank::engine::model
