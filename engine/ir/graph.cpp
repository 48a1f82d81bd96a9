#include "engine/ir/graph.h"

#include <algorithm>
#include <cstring>

namespace tilebank::engine::model {

Tensor ConstTensor::AsTensor() const {
  Tensor t;
  t.shape = shape;
  if (type == Type::kFloat && static_cast<int64_t>(floats.size()) == size()) {  // the values as they are: no per-element conversion
    t.data = floats;
    return t;
  }
  t.data.resize(static_cast<size_t>(size()));
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

kernels::KernelInfo StaticKernelInfoOf(const Graph& graph, const Node& n) {
  kernels::KernelInfo info = KernelInfoOf(graph, n);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const int v = n.inputs[i];
    const bool static_shape = v >= 0 && graph.values[v].shape_known && graph.values[v].kind == ValueKind::kTensor;
    info.input_shapes.push_back(static_shape ? std::optional(graph.values[v].shape) : std::nullopt);
    const bool small_constant = v >= 0 && graph.IsConstant(v) && info.input_types[i] != DType::kString && info.input_types[i] != DType::kUndefined &&
                                graph.values[v].constant->size() <= kernels::KernelInfo::kConstantValueLimit;
    info.constant_inputs.push_back(small_constant ? std::make_shared<const TypedTensor>(graph.values[v].constant->AsTyped(info.input_types[i])) : nullptr);
    info.constant_input.push_back(v >= 0 && graph.IsConstant(v));
  }
  for (int v : n.outputs) {
    const bool static_shape = v >= 0 && graph.values[v].shape_known && graph.values[v].kind == ValueKind::kTensor;
    info.output_shapes.push_back(static_shape ? std::optional(graph.values[v].shape) : std::nullopt);
  }
  return info;
}

TypedTensor ConstTensor::AsTyped(DType dtype) const {
  if (type == Type::kFloat && dtype == DType::kFloat32 && static_cast<int64_t>(floats.size()) == size()) return TypedTensor::Of<float>(shape, floats);
  if (type == Type::kInt && dtype == DType::kInt64 && static_cast<int64_t>(ints.size()) == size()) return TypedTensor::Of<int64_t>(shape, ints);
  TypedTensor t(dtype, shape);
  // 8-bit weights (int8 and uint8 models' constants) copied as they are.
  const bool eight_bit = (type == Type::kInt8 && dtype == DType::kInt8) || (type == Type::kUInt8 && (dtype == DType::kUInt8 || dtype == DType::kBool));
  if (eight_bit && static_cast<int64_t>(bytes.size()) == size()) {
    std::memcpy(t.bytes.data(), bytes.data(), bytes.size());
    return t;
  }
  for (int64_t i = 0; i < t.size() && dtype != DType::kString; ++i) IsInteger() ? t.SetIntAt(i, IntAt(i)) : t.SetAt(i, floats[i]);
  return t;
}

bool ConstTensor::Uniform() const {
  return type == Type::kFloat && !floats.empty() && std::all_of(floats.begin(), floats.end(), [&](float f) { return f == floats[0]; });
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
