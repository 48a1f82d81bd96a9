// A graph node as the engine's operator description (engine/core/op_spec.h): the ATC single-op
// form of its op type, shapes and attributes, so that it has a bank key and templates can run it.
#pragma once
#include <vector>

#include "engine/ir/graph.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine::model {

struct NodeOp {
  OpSpec op;
  std::vector<int> input_values;  // op input i is graph value input_values[i]
};

// kInvalidInput when the node has non-float32 runtime operands, or attributes/inputs that the
// ATC form cannot carry. Integer constant operands that ONNX passes as inputs (ReduceSum's axes)
// become attributes.
Result<NodeOp> NodeOpSpec(const Graph& graph, const Node& node);

// The description (ATC single-op JSON) of the node, named after it: what `run --dump` writes.
nlohmann::json NodeDescription(const Graph& graph, const Node& node, const std::vector<int>& input_values);

}  // namespace tilebank::engine::model
