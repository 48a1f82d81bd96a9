// An ONNX node's attributes as the registry's kernels take them (engine/kernels/op_kernel.h's
// KernelInfo): numbers, strings and their lists as JSON, TENSOR attributes as TypedTensors, GRAPH
// attributes (If's branches, Loop's and Scan's bodies) as kernels::Subgraph, and the names those
// subgraphs read from enclosing scopes, which the node takes as implicit inputs.
#pragma once
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kernels/subgraph.h"
#include "base/status.h"

namespace tilebank::engine::model {

struct NodeAttributes {
  nlohmann::json attrs = nlohmann::json::object();
  std::map<std::string, TypedTensor> tensors;
  std::map<std::string, std::shared_ptr<const kernels::Subgraph>> graphs;
  std::vector<std::string> implicit_inputs;  // first use first, each once
};

// kInvalidInput naming the node for a tensor or subgraph that does not read.
Result<NodeAttributes> ReadNodeAttributes(const onnx::NodeProto& node);

// A Constant node's value (value, value_float(s), value_int(s), value_string(s)).
Result<TypedTensor> ConstantNodeValue(const onnx::NodeProto& node);

}  // namespace tilebank::engine::model
