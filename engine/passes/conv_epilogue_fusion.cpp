#include "engine/passes/conv_epilogue_fusion.h"

#include <algorithm>

#include "engine/ir/graph_uses.h"
#include "engine/passes/activation_match.h"

namespace tilebank::engine::model {
namespace {

bool StaticFloat(const Graph& g, int v) {
  return v >= 0 && g.values[v].shape_known && g.values[v].kind == ValueKind::kTensor && g.values[v].dtype == "float32";
}

// Whether SGAT's partition and the tuned templates take this Conv (2-D; auto_pad is resolved into
// pads for them): those keep their own fusions and layouts.
bool OnTemplatePath(const Graph& g, const Node& conv) { return g.values[conv.inputs[0]].shape.size() == 4; }

}  // namespace

size_t FuseConvEpilogues(Graph* g) {
  size_t fused = 0;
  std::vector<bool> drop(g->nodes.size(), false);
  const std::vector<std::vector<int>> readers = Readers(*g);
  std::vector<bool> is_output(g->values.size(), false);
  for (int v : g->outputs) is_output[v] = true;
  for (size_t c = 0; c < g->nodes.size(); ++c) {
    const Node& conv = g->nodes[c];
    if (conv.op_type != "Conv" || drop[c] || conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
    const int x = conv.inputs[0], y = conv.outputs[0];
    if (!StaticFloat(*g, x) || !StaticFloat(*g, conv.inputs[1]) || !StaticFloat(*g, y) || OnTemplatePath(*g, conv)) continue;
    std::vector<int> nodes = {static_cast<int>(c)};
    int value = y, residual = -1;
    if (!is_output[value] && readers[value].size() == 1) {
      const int add = readers[value][0];
      const Node& a = g->nodes[add];
      const int z = a.op_type == "Add" && !drop[add] && a.outputs.size() == 1 ? OtherInput(a, value) : -1;
      if (z >= 0 && StaticFloat(*g, z) && g->values[z].shape == g->values[y].shape && StaticFloat(*g, a.outputs[0])) {
        residual = z;
        nodes.push_back(add);
        value = a.outputs[0];
      }
    }
    EpilogueActivation activation = MatchEpilogueActivation(*g, value, readers, is_output);
    if (std::any_of(activation.nodes.begin(), activation.nodes.end(), [&](int n) { return drop[n]; })) activation = {};
    if (!activation.nodes.empty()) {
      nodes.insert(nodes.end(), activation.nodes.begin(), activation.nodes.end());
      value = g->nodes[activation.nodes.back()].outputs[0];
    }
    if (nodes.size() == 1 || !StaticFloat(*g, value)) continue;
    Node fused_node;
    fused_node.name = conv.name + "/fused_conv";
    fused_node.op_type = "FusedConv";
    fused_node.inputs = {x, conv.inputs[1], conv.inputs.size() > 2 ? conv.inputs[2] : -1};
    if (residual >= 0) fused_node.inputs.push_back(residual);
    fused_node.outputs = {value};
    fused_node.attrs = conv.attrs;
    if (!activation.name.empty()) fused_node.attrs["activation"] = activation.name;
    ReplaceNodes(g, nodes, std::move(fused_node), &drop);  // at the last node: Z is written before it
    ++fused;
  }
  if (fused) EraseNodes(g, [&](size_t i) { return drop[i]; });
  return fused;
}

}  // namespace tilebank::engine::model
