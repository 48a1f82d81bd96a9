#include "engine/passes/group_norm_fusion.h"

#include "engine/ir/graph_uses.h"

#include <optional>

namespace tilebank::engine::model {
namespace {

// The one node reading `value` (which is no graph output), of type `op_type`; nullopt otherwise.
std::optional<int> OnlyReader(const Graph& g, const GraphUses& u, int value, const char* op_type) {
  if (!u.Private(value)) return std::nullopt;
  const int n = static_cast<int>(u.readers[value][0]);
  if (g.nodes[n].op_type != op_type) return std::nullopt;
  return n;
}

// A constant of `count` elements all equal to `v`.
bool AllEqual(const Graph& g, int value, int64_t count, double v) {
  if (!g.IsConstant(value) || g.values[value].constant->size() != count) return false;
  for (int64_t i = 0; i < count; ++i)
    if (g.values[value].constant->At(i) != v) return false;
  return true;
}

// The per-channel constant operand of a Mul or Add on a [N, C, ...] tensor: C values broadcast
// along axis 1 ([C, 1, ...] or [1, C, 1, ...]); nullopt otherwise.
std::optional<std::vector<float>> PerChannel(const Graph& g, const Node& n, int tensor, const std::vector<int64_t>& x_shape) {
  if (n.inputs.size() != 2) return std::nullopt;
  const int other = n.inputs[0] == tensor ? n.inputs[1] : n.inputs[0];
  if (!g.IsConstant(other) || (n.inputs[0] != tensor && n.inputs[1] != tensor)) return std::nullopt;
  const ConstTensor& c = *g.values[other].constant;
  const int64_t C = x_shape[1];
  std::vector<int64_t> aligned(x_shape.size() - std::min(x_shape.size(), c.shape.size()), 1);
  aligned.insert(aligned.end(), c.shape.begin(), c.shape.end());
  if (aligned.size() != x_shape.size()) return std::nullopt;
  for (size_t d = 0; d < aligned.size(); ++d)
    if (aligned[d] != (d == 1 ? C : 1)) return std::nullopt;
  std::vector<float> v(static_cast<size_t>(C));
  for (int64_t i = 0; i < C; ++i) v[i] = static_cast<float>(c.At(i));
  return v;
}

}  // namespace

size_t FuseGroupNorm(Graph* g) {
  size_t fused = 0;
  std::vector<bool> drop(g->nodes.size(), false);
  const GraphUses u = UsesOf(*g);
  for (size_t r1 = 0; r1 < g->nodes.size(); ++r1) {
    const Node& reshape = g->nodes[r1];
    if (reshape.op_type != "Reshape" || reshape.inputs.empty() || reshape.outputs.empty() || drop[r1]) continue;
    const Value& x = g->values[reshape.inputs[0]];
    if (x.dtype != "float32" || !x.shape_known || x.shape.size() < 3 || x.kind != ValueKind::kTensor) continue;
    const Value& grouped = g->values[reshape.outputs[0]];
    if (!grouped.shape_known || grouped.shape.size() != 3 || grouped.shape[0] != x.shape[0]) continue;
    const int64_t C = x.shape[1], G = grouped.shape[1];
    if (G < 1 || C % G) continue;
    auto norm = OnlyReader(*g, u, reshape.outputs[0], "InstanceNormalization");
    if (!norm) continue;
    const Node& in = g->nodes[*norm];
    if (in.inputs.size() < 3 || in.inputs[0] != reshape.outputs[0] || !AllEqual(*g, in.inputs[1], G, 1.0) || !AllEqual(*g, in.inputs[2], G, 0.0)) continue;
    auto back = OnlyReader(*g, u, in.outputs[0], "Reshape");
    if (!back || g->values[g->nodes[*back].outputs[0]].shape != x.shape) continue;
    auto mul = OnlyReader(*g, u, g->nodes[*back].outputs[0], "Mul");
    if (!mul) continue;
    auto gamma = PerChannel(*g, g->nodes[*mul], g->nodes[*back].outputs[0], x.shape);
    auto add = gamma ? OnlyReader(*g, u, g->nodes[*mul].outputs[0], "Add") : std::nullopt;
    if (!add) continue;
    auto beta = PerChannel(*g, g->nodes[*add], g->nodes[*mul].outputs[0], x.shape);
    if (!beta) continue;
    std::vector<int> nodes = {static_cast<int>(r1), *norm, *back, *mul, *add};
    int output = g->nodes[*add].outputs[0];
    std::string activation;
    // SiLU after it: Sigmoid(y) and Mul(y, Sigmoid(y)), y read by those two only.
    if (!u.outputs.count(output) && u.readers[output].size() == 2) {
      for (size_t reader : u.readers[output]) {
        const int s = static_cast<int>(reader);
        const Node& sigmoid = g->nodes[s];
        if (sigmoid.op_type != "Sigmoid" || sigmoid.outputs.empty()) continue;
        auto product = OnlyReader(*g, u, sigmoid.outputs[0], "Mul");
        const int other = static_cast<int>(u.readers[output][0] == reader ? u.readers[output][1] : u.readers[output][0]);
        if (!product || *product != other) continue;
        const Node& m = g->nodes[*product];
        if (!(m.inputs.size() == 2 && ((m.inputs[0] == output && m.inputs[1] == sigmoid.outputs[0]) ||
                                       (m.inputs[1] == output && m.inputs[0] == sigmoid.outputs[0]))))
          continue;
        nodes.push_back(s);
        nodes.push_back(*product);
        output = m.outputs[0];
        activation = "Swish";
        break;
      }
    }
    if (!g->values[output].shape_known || g->values[output].shape != x.shape) continue;  // the arena kernel is made for it
    Node fusedNode;
    fusedNode.name = in.name + "/fused_group_norm";
    fusedNode.op_type = "FusedGroupNormalization";
    const int scale = static_cast<int>(g->values.size());
    g->values.push_back(Value{fusedNode.name + "/scale", {C}, "float32", ConstTensor::Floats({C}, *gamma)});
    g->values.push_back(Value{fusedNode.name + "/bias", {C}, "float32", ConstTensor::Floats({C}, *beta)});
    fusedNode.inputs = {reshape.inputs[0], scale, scale + 1};
    fusedNode.outputs = {output};
    fusedNode.attrs = {{"num_groups", G}, {"epsilon", g->AttrFloat(in, "epsilon", 1e-5f)}};
    if (!activation.empty()) fusedNode.attrs["activation"] = activation;
    ReplaceNodes(g, nodes, std::move(fusedNode), &drop);
    ++fused;
  }
  if (fused) EraseNodes(g, [&](size_t i) { return drop[i]; });
  return fused;
}

}  // namespace tilebank::engine::model
