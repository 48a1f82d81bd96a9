#include "engine/ir/node_attributes.h"

#include <algorithm>
#include <set>

#include "engine/ir/tensor_proto.h"

namespace tilebank::engine::model {
namespace {

Status BadNode(const onnx::NodeProto& node, const std::string& what) {
  return Status::InvalidInput("node '" + node.name() + "' (" + node.op_type() + "): " + what);
}

Result<std::shared_ptr<const kernels::Subgraph>> ReadSubgraph(const onnx::GraphProto& g, std::vector<std::string>* outer_names) {
  auto sub = std::make_shared<kernels::Subgraph>();
  sub->name = g.name();
  std::set<std::string> defined;
  for (const auto& in : g.input()) {
    sub->inputs.push_back(in.name());
    defined.insert(in.name());
  }
  for (const auto& init : g.initializer()) {
    auto t = TensorFromProto(init);
    if (!t.ok()) return t.status().WithContext("subgraph '" + g.name() + "'");
    sub->constants[init.name()] = std::move(t.value());
    defined.insert(init.name());
  }
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && std::find(outer_names->begin(), outer_names->end(), name) == outer_names->end())
      outer_names->push_back(name);
  };
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant") {
      auto value = ConstantNodeValue(n);
      if (!value.ok()) return value.status().WithContext("subgraph '" + g.name() + "'");
      sub->constants[n.output(0)] = std::move(value.value());
      defined.insert(n.output(0));
      continue;
    }
    auto attributes = ReadNodeAttributes(n);
    if (!attributes.ok()) return attributes.status().WithContext("subgraph '" + g.name() + "'");
    kernels::SubgraphNode node;
    node.info.op_type = n.op_type();
    node.info.node_name = n.name().empty() ? n.op_type() : n.name();
    node.info.attrs = kernels::Attrs(std::move(attributes->attrs));
    node.info.tensor_attrs = std::move(attributes->tensors);
    node.info.graphs = std::move(attributes->graphs);
    node.info.implicit_inputs = std::move(attributes->implicit_inputs);
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const std::string& name : node.inputs) read(name);
    for (const std::string& name : node.info.implicit_inputs) read(name);
    for (const std::string& name : node.outputs) defined.insert(name);
    sub->nodes.push_back(std::move(node));
  }
  for (const auto& out : g.output()) {
    sub->outputs.push_back(out.name());
    read(out.name());
  }
  return std::shared_ptr<const kernels::Subgraph>(std::move(sub));
}

}  // namespace

Result<TypedTensor> ConstantNodeValue(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "value") return TensorFromProto(a.t());
    if (a.name() == "value_float") return TypedTensor::Of<float>({}, {a.f()});
    if (a.name() == "value_floats") return TypedTensor::Of<float>({a.floats_size()}, {a.floats().begin(), a.floats().end()});
    if (a.name() == "value_int") return TypedTensor::Of<int64_t>({}, {a.i()});
    if (a.name() == "value_ints") return TypedTensor::Of<int64_t>({a.ints_size()}, {a.ints().begin(), a.ints().end()});
    if (a.name() == "value_string" || a.name() == "value_strings") {
      TypedTensor t(DType::kString, a.name() == "value_string" ? std::vector<int64_t>{} : std::vector<int64_t>{a.strings_size()});
      if (a.name() == "value_string") t.strings[0] = a.s();
      else t.strings.assign(a.strings().begin(), a.strings().end());
      return t;
    }
  }
  return BadNode(node, "has no value this executor reads");
}

Result<NodeAttributes> ReadNodeAttributes(const onnx::NodeProto& node) {
  NodeAttributes out;
  for (const auto& a : node.attribute()) {
    out.attrs[a.name()] = AttributeJson(a);
    if (a.type() == onnx::AttributeProto::TENSOR) {
      auto t = TensorFromProto(a.t());
      if (!t.ok()) return BadNode(node, "attribute '" + a.name() + "': " + t.status().message());
      out.tensors[a.name()] = std::move(t.value());
    }
    if (a.type() == onnx::AttributeProto::GRAPH) {
      auto g = ReadSubgraph(a.g(), &out.implicit_inputs);
      if (!g.ok()) return BadNode(node, "attribute '" + a.name() + "': " + g.status().message());
      out.graphs[a.name()] = std::move(g.value());
    }
  }
  return out;
}

}  // namespace tilebank::engine::model
