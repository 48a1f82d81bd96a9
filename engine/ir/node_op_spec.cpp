#include "engine/ir/node_op_spec.h"

#include "engine/core/op_semantics.h"

namespace tilebank::engine::model {

namespace {

// Operands as float32 (the float templates' ops; constants of other types are read as floats), or in
// their own dtypes for the int8 ops, whose 8-bit, int32 and float32 operands are part of the problem.
nlohmann::json Desc(const Value& v, bool typed) {
  return {{"shape", v.shape}, {"type", typed ? v.dtype : "float32"}, {"format", v.shape.size() == 4 ? "NCHW" : "ND"}};
}

// Whether a zero point input of an int8 op is used: absent, or a constant of zeros, is not.
bool ZeroPointUsed(const Graph& g, const Node& n, size_t input) {
  if (input >= n.inputs.size() || n.inputs[input] < 0) return false;
  if (!g.IsConstant(n.inputs[input])) return true;
  const ConstTensor& c = *g.values[n.inputs[input]].constant;
  for (int64_t i = 0; i < c.size(); ++i)
    if (c.At(i) != 0) return true;
  return false;
}

nlohmann::json AtcAttribute(const std::string& name, const nlohmann::json& value) {
  if (value.is_number_integer()) return {{"name", name}, {"type", "int"}, {"value", value}};
  if (value.is_number()) return {{"name", name}, {"type", "float"}, {"value", value}};
  if (value.is_string()) return {{"name", name}, {"type", "str"}, {"value", value}};
  if (value.is_array() && !value.empty() && value[0].is_number_integer()) return {{"name", name}, {"type", "list_int"}, {"value", value}};
  if (value.is_array() && !value.empty() && value[0].is_number()) return {{"name", name}, {"type", "list_float"}, {"value", value}};
  if (value.is_array() && value.empty()) return {{"name", name}, {"type", "list_int"}, {"value", value}};
  return nullptr;
}

}  // namespace

nlohmann::json NodeDescription(const Graph& g, const Node& n, const std::vector<int>& input_values) {
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array(), attrs = nlohmann::json::array();
  const bool typed = IsQuantizedTunedOp(n.op_type);
  for (int v : input_values) inputs.push_back(Desc(g.values[v], typed));
  for (int v : n.outputs)
    if (v >= 0) outputs.push_back(Desc(g.values[v], typed));
  for (const auto& [name, value] : n.attrs.items())
    if (auto a = AtcAttribute(name, value); !a.is_null()) attrs.push_back(a);
  if (typed)  // oneDNN takes other paths with zero points (engine/kernels/quantized_op_operands.h)
    for (const auto& [name, input] : {std::pair<const char*, size_t>{"x_zero_point_nonzero", 2}, {"y_zero_point_nonzero", 7}})
      if (ZeroPointUsed(g, n, input)) attrs.push_back(AtcAttribute(name, 1));
  for (size_t i = 1; n.op_type == "Clip" && i < n.inputs.size() && i < 3; ++i)
    if (n.inputs[i] >= 0 && g.IsConstant(n.inputs[i]))
      attrs.push_back({{"name", i == 1 ? "min" : "max"}, {"type", "float"}, {"value", g.values[n.inputs[i]].constant->At(0)}});
  if (n.op_type == "ReduceSum" && n.inputs.size() > 1 && g.IsConstant(n.inputs[1])) {
    std::vector<int64_t> axes;
    const ConstTensor& c = *g.values[n.inputs[1]].constant;
    for (int64_t i = 0; i < c.size(); ++i) axes.push_back(static_cast<int64_t>(c.At(i)));
    attrs.push_back({{"name", "axes"}, {"type", "list_int"}, {"value", axes}});
  }
  return {{"op", n.op_type}, {"name", n.name}, {"input_desc", inputs}, {"output_desc", outputs}, {"attr", attrs}};
}

namespace {

thread_local NodeOpSpecMemo* active_memo = nullptr;

Result<NodeOp> DescribedNodeOp(const Graph& g, const Node& n);

}  // namespace

NodeOpSpecMemo::NodeOpSpecMemo(const Graph& graph) : graph_(graph), known_(graph.nodes.size()), outer_(active_memo) { active_memo = this; }

NodeOpSpecMemo::~NodeOpSpecMemo() { active_memo = outer_; }

Result<NodeOp> NodeOpSpec(const Graph& g, const Node& n) {
  NodeOpSpecMemo* memo = active_memo;
  if (!memo || &memo->graph_ != &g || g.nodes.size() != memo->known_.size() || &n < g.nodes.data() || &n >= g.nodes.data() + g.nodes.size())
    return DescribedNodeOp(g, n);
  std::optional<Result<NodeOp>>& known = memo->known_[static_cast<size_t>(&n - g.nodes.data())];
  if (!known) known = DescribedNodeOp(g, n);
  return *known;
}

namespace {

Result<NodeOp> DescribedNodeOp(const Graph& g, const Node& n) {
  NodeOp out;
  const bool typed = IsQuantizedTunedOp(n.op_type);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const int v = n.inputs[i];
    if (v < 0) {
      if (i + 1 < n.inputs.size()) return Status::InvalidInput("node '" + n.name + "': an optional input before others is left out");
      continue;
    }
    if (n.op_type == "ReduceSum" && i == 1) continue;  // axes: an attribute in the ATC form
    if (n.op_type == "Clip" && i > 0) {                  // bounds: the attributes min and max
      if (!g.IsConstant(v)) return Status::InvalidInput("node '" + n.name + "': Clip's bounds must be constant");
      continue;
    }
    if (!typed && g.values[v].dtype != "float32") return Status::InvalidInput("node '" + n.name + "': input '" + g.values[v].name + "' is " + g.values[v].dtype);
    if (!g.values[v].shape_known) return Status::InvalidInput("node '" + n.name + "': the shape of '" + g.values[v].name + "' is known only at run time");
    out.input_values.push_back(v);
  }
  if (n.op_type == "ReduceSum" && n.inputs.size() > 1 && n.inputs[1] >= 0 && !g.IsConstant(n.inputs[1]))
    return Status::InvalidInput("node '" + n.name + "': ReduceSum's axes must be constant");
  for (int v : n.outputs) {
    if (v >= 0 && !typed && g.values[v].dtype != "float32") return Status::InvalidInput("node '" + n.name + "': output is " + g.values[v].dtype);
    if (v >= 0 && !g.values[v].shape_known) return Status::InvalidInput("node '" + n.name + "': its output's shape is known only at run time");
  }
  auto op = ParseOpSpec(NodeDescription(g, n, out.input_values), 0);
  if (!op.ok()) return op.status();
  out.op = std::move(op.value());
  return out;
}

}  // namespace

}  // namespace tilebank::engine::model
