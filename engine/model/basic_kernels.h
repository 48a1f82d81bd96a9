// Kernels for the operators outside the tuned set: data movement (Transpose, Concat, Slice,
// Gather, Pad, Expand, Where, Resize), Clip, Pow, Sqrt, Neg, Exp, BatchNormalization on its own, and copies. Each reads
// row-major float32 inputs and writes a row-major output; constant operands (Clip bounds, Gather
// indices, Pad widths, a Pow exponent, Resize scales) are read once, when the kernel is made. Reshape, Flatten,
// Squeeze and Unsqueeze have no kernel: the executor gives their output the input's memory.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/graph.h"
#include "repo/status.h"

namespace tilebank::engine::model {

using BasicKernel = std::function<void(const std::vector<const float*>& inputs, float* output)>;


// kInvalidInput when the node is not one of these ops, or uses them in a way not supported
// (naming the node and what).
Result<BasicKernel> MakeBasicKernel(const Graph& graph, const Node& node);

// Inference BatchNormalization per channel c as y = x * scale[c] + shift[c]:
// scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale. kInvalidInput unless its four
// parameter inputs are constants of `channels` values.
struct ChannelAffine {
  std::vector<double> scale, shift;
};
Result<ChannelAffine> BatchNormAffine(const Graph& graph, const Node& batch_norm, int64_t channels);

// The op types MakeBasicKernel knows.
const std::vector<std::string>& BasicOpTypes();

}  // namespace tilebank::engine::model
