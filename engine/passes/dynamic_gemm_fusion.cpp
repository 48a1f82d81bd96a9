#include "engine/passes/dynamic_gemm_fusion.h"

#include <algorithm>

#include "engine/ir/graph_uses.h"
#include "engine/passes/activation_match.h"

namespace tilebank::engine::model {
namespace {

bool FloatConstant(const Graph& g, int v) { return g.IsConstant(v) && g.values[v].dtype == "float32"; }

// A constant float32 row of n values: shape [n], [1, n], [1, 1, n], ...
bool IsBiasRow(const Graph& g, int v, int64_t n) {
  if (!FloatConstant(g, v)) return false;
  const auto& shape = g.values[v].shape;
  if (shape.empty() || shape.back() != n) return false;
  return std::all_of(shape.begin(), shape.end() - 1, [](int64_t d) { return d == 1; });
}

}  // namespace

size_t FuseDynamicGemm(Graph* g) {
  size_t fused = 0;
  std::vector<bool> drop(g->nodes.size(), false);
  const std::vector<std::vector<int>> readers = Readers(*g);
  std::vector<bool> is_output(g->values.size(), false);
  for (int v : g->outputs) is_output[v] = true;
  auto private_reader = [&](int value, const char* op_type) -> int {
    if (value < 0 || is_output[value] || readers[value].size() != 1) return -1;
    const int n = readers[value][0];
    return g->nodes[n].op_type == op_type && !drop[n] ? n : -1;
  };
  for (size_t a = 0; a < g->nodes.size(); ++a) {
    const Node& gemm = g->nodes[a];
    const bool is_gemm = gemm.op_type == "Gemm", is_matmul = gemm.op_type == "MatMul";
    if ((!is_gemm && !is_matmul) || drop[a] || gemm.inputs.size() < 2 || gemm.inputs[0] < 0 || gemm.outputs.empty() || gemm.outputs[0] < 0) continue;
    const Value& y = g->values[gemm.outputs[0]];
    if (y.shape_known || y.kind != ValueKind::kTensor || y.dtype != "float32" || g->values[gemm.inputs[0]].dtype != "float32") continue;
    const int b = gemm.inputs[1];
    if (!FloatConstant(*g, b) || g->values[b].shape.size() != 2) continue;
    const bool trans_b = is_gemm && g->AttrInt(gemm, "transB", 0) != 0;
    const int64_t N = g->values[b].shape[trans_b ? 0 : 1];
    int bias = -1;
    if (is_gemm) {
      if (g->AttrInt(gemm, "transA", 0) != 0 || g->AttrFloat(gemm, "alpha", 1.0f) != 1.0f) continue;
      if (gemm.inputs.size() > 2 && gemm.inputs[2] >= 0 && g->AttrFloat(gemm, "beta", 1.0f) != 0.0f) {
        if (g->AttrFloat(gemm, "beta", 1.0f) != 1.0f || !IsBiasRow(*g, gemm.inputs[2], N)) continue;
        bias = gemm.inputs[2];
      }
    }
    std::vector<int> nodes = {static_cast<int>(a)};
    int value = gemm.outputs[0];
    if (is_matmul) {  // MatMul, then Add of a constant row of rank 1 (a higher rank could raise the output's)
      const int add = private_reader(value, "Add");
      const int row = add >= 0 ? OtherInput(g->nodes[add], value) : -1;
      if (row >= 0 && g->values[row].shape.size() == 1 && IsBiasRow(*g, row, N)) {
        bias = row;
        nodes.push_back(add);
        value = g->nodes[add].outputs[0];
      }
    }
    EpilogueActivation activation = MatchEpilogueActivation(*g, value, readers, is_output);
    if (std::any_of(activation.nodes.begin(), activation.nodes.end(), [&](int n) { return drop[n]; })) activation = {};
    if (!activation.nodes.empty()) {
      nodes.insert(nodes.end(), activation.nodes.begin(), activation.nodes.end());
      value = g->nodes[activation.nodes.back()].outputs[0];
    }
    Node fused_node;
    fused_node.name = gemm.name + "/fused_gemm";
    fused_node.op_type = "FusedGemm";
    fused_node.inputs = {gemm.inputs[0], b};
    if (bias >= 0) fused_node.inputs.push_back(bias);
    fused_node.outputs = {value};
    fused_node.attrs = {{"transB", trans_b ? 1 : 0}};
    if (!activation.name.empty()) fused_node.attrs["activation"] = activation.name;
    ReplaceNodes(g, nodes, std::move(fused_node), &drop);
    ++fused;
  }
  if (fused) EraseNodes(g, [&](size_t i) { return drop[i]; });
  return fused;
}

}  // namespace tilebank::engine::model
