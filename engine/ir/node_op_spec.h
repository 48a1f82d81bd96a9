// A graph node as the engine's operator description (engine/core/op_spec.h): the ATC single-op
// form of its op type, shapes and attributes, so that it has a bank key and templates can run it.
#pragma once
#include <optional>
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

// While one lives, NodeOpSpec on this thread answers each node of `graph` with what it computed for
// that node before, instead of building and parsing its description again (60-75 us a node, up to
// four times each in a load: 20-65 ms of a CNN's). For work that changes neither the graph's nodes
// nor the values they describe (the executor's load). Scopes nest; the innermost one answers.
class NodeOpSpecMemo {
 public:
  explicit NodeOpSpecMemo(const Graph& graph);
  ~NodeOpSpecMemo();
  NodeOpSpecMemo(const NodeOpSpecMemo&) = delete;
  NodeOpSpecMemo& operator=(const NodeOpSpecMemo&) = delete;

 private:
  friend Result<NodeOp> NodeOpSpec(const Graph& graph, const Node& node);
  const Graph& graph_;
  std::vector<std::optional<Result<NodeOp>>> known_;  // by node index
  NodeOpSpecMemo* outer_;
};

// The description (ATC single-op JSON) of the node, named after it: what `run --dump` writes.
nlohmann::json NodeDescription(const Graph& graph, const Node& node, const std::vector<int>& input_values);

}  // namespace tilebank::engine::model
