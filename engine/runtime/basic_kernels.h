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

#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

using BasicKernel = std::function<void(const std::vector<const float*>& inputs, float* output)>;


// kInvalidInput when the node is not one of these ops, or uses them in a way not supported
// (naming the node and what).
Result<BasicKernel> MakeBasicKernel(const Graph& graph, const Node& node);

// The op types MakeBasicKernel knows.
const std::vector<std::string>& BasicOpTypes();

}  // namespace tilebank::engine::model
