#include "engine/ir/graph.h"

namespace tilebank::engine::model {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape) {
  const auto in_strides = RowMajorStrides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t offset = out_shape.size() - in_shape.size();
  for (size_t d = offset; d < out_shape.size(); ++d)
    if (in_shape[d - offset] != 1) strides[d] = in_strides[d - offset];
  return strides;
}

Tensor ConstTensor::AsTensor() const {
  Tensor t(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = static_cast<float>(At(i));
  return t;
}

kernels::KernelInfo KernelInfoOf(const Graph& graph, const Node& n) {
  kernels::KernelInfo info;
  info.op_type = n.op_type;
  info.node_name = n.name;
  info.attrs = kernels::Attrs(n.attrs);
  info.opset = graph.opset;
  info.num_outputs = static_cast<int>(n.outputs.size());
  for (int v : n.inputs) {
    info.input_types.push_back(v < 0 ? DType::kUndefined : ParseDType(graph.values[v].dtype).value_or(DType::kUndefined));
    info.input_kinds.push_back(v < 0 ? ValueKind::kTensor : graph.values[v].kind);
  }
  info.tensor_attrs = n.tensor_attrs;
  info.graphs = n.graphs;
  info.implicit_inputs = n.implicit_inputs;
  return info;
}

TypedTensor ConstTensor::AsTyped(DType dtype) const {
  TypedTensor t(dtype, shape);
  for (int64_t i = 0; i < t.size() && dtype != DType::kString; ++i) type == Type::kInt ? t.SetIntAt(i, ints[i]) : t.SetAt(i, floats[i]);
  return t;
}

ConstTensor ConstTensor::Floats(std::vector<int64_t> shape, std::vector<float> values) {
  ConstTensor c;
  c.shape = std::move(shape);
  c.floats = std::move(values);
  return c;
}

ConstTensor ConstTensor::Ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  ConstTensor c;
  c.type = Type::kInt;
  c.shape = std::move(shape);
  c.ints = std::move(values);
  return c;
}

int64_t Graph::AttrInt(const Node& n, const std::string& name, int64_t fallback) const {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

float Graph::AttrFloat(const Node& n, const std::string& name, float fallback) const {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->is_number() ? it->get<float>() : fallback;
}

std::vector<int64_t> Graph::AttrInts(const Node& n, const std::string& name, std::vector<int64_t> fallback) const {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->is_array() ? it->get<std::vector<int64_t>>() : fallback;
}

std::string Graph::AttrString(const Node& n, const std::string& name, const std::string& fallback) const {
  auto it = n.attrs.find(name);
  return it != n.attrs.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace tilebank::engine::model
