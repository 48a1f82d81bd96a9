#include "engine/passes/activation_match.h"

#include <algorithm>
#include <cmath>

namespace tilebank::engine::model {

// Whether value `v` is a constant of one element within `tolerance` of `want`.
bool IsScalar(const Graph& g, int v, double want, double tolerance) {
  return v >= 0 && g.IsConstant(v) && g.values[v].constant->size() == 1 && std::fabs(g.values[v].constant->At(0) - want) <= tolerance;
}

// The other input of binary node `n` than `value` (-1 when `value` is not exactly one of them).
int OtherInput(const Node& n, int value) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == value && n.inputs[1] != value) return n.inputs[1];
  if (n.inputs[1] == value && n.inputs[0] != value) return n.inputs[0];
  return -1;
}

// The erf form of GELU on `value` as PyTorch exports it: Div(x, sqrt 2) (or Mul(x, 1/sqrt 2)),
// Erf, Add 1, Mul by x, Mul 0.5; its five nodes in order, or empty. `readers` says who reads what.
// Intermediate values the model outputs are not matched (fusing would drop them).
std::vector<int> MatchGelu(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output) {
  if (readers[value].size() != 2) return {};
  auto single_reader = [&](int node, const char* type) -> int {
    const int out = g.nodes[node].outputs.empty() ? -1 : g.nodes[node].outputs[0];
    if (out < 0 || is_output[out] || readers[out].size() != 1 || g.nodes[readers[out][0]].op_type != type) return -1;
    return readers[out][0];
  };
  for (int first : readers[value]) {
    const Node& scale = g.nodes[first];
    const int c = OtherInput(scale, value);
    const bool div = scale.op_type == "Div" && scale.inputs[0] == value && IsScalar(g, c, 1.4142135623730951, 1e-4);
    const bool mul = scale.op_type == "Mul" && IsScalar(g, c, 0.7071067811865476, 1e-4);
    if (!div && !mul) continue;
    const int erf = single_reader(first, "Erf");
    const int add = erf < 0 ? -1 : single_reader(erf, "Add");
    if (add < 0 || !IsScalar(g, OtherInput(g.nodes[add], g.nodes[erf].outputs[0]), 1.0)) continue;
    const int times_x = single_reader(add, "Mul");
    if (times_x < 0 || OtherInput(g.nodes[times_x], g.nodes[add].outputs[0]) != value) continue;
    const int half = single_reader(times_x, "Mul");
    if (half < 0 || !IsScalar(g, OtherInput(g.nodes[half], g.nodes[times_x].outputs[0]), 0.5)) continue;
    const int other_reader = readers[value][0] == first ? readers[value][1] : readers[value][0];
    if (other_reader != times_x) continue;
    return {first, erf, add, times_x, half};
  }
  return {};
}

// GELU's tanh approximation on `value`, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as
// PyTorch (gelu(approximate="tanh")) and GPT-2's code export it: x^3 as Pow(x, 3) or x * (x * x),
// the 0.5 applied last or to x first; its nodes in graph order, or empty.
std::vector<int> MatchGeluTanh(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output) {
  auto out_of = [&](int node) { return g.nodes[node].outputs.empty() ? -1 : g.nodes[node].outputs[0]; };
  auto single_reader = [&](int node, const char* type) -> int {
    const int out = out_of(node);
    if (out < 0 || is_output[out] || readers[out].size() != 1 || g.nodes[readers[out][0]].op_type != type) return -1;
    return readers[out][0];
  };
  auto reads_scalar = [&](int node, int input, double want) { return node >= 0 && IsScalar(g, OtherInput(g.nodes[node], input), want, 1e-4); };
  for (int first : readers[value]) {
    std::vector<int> nodes;
    int cube = -1;
    const Node& n = g.nodes[first];
    if (n.op_type == "Pow" && n.inputs.size() == 2 && n.inputs[0] == value && IsScalar(g, n.inputs[1], 3.0)) {
      cube = first;
      nodes = {first};
    } else if (n.op_type == "Mul" && n.inputs.size() == 2 && n.inputs[0] == value && n.inputs[1] == value) {
      cube = single_reader(first, "Mul");
      if (cube < 0 || OtherInput(g.nodes[cube], out_of(first)) != value) continue;
      nodes = {first, cube};
    } else {
      continue;
    }
    const int scaled = single_reader(cube, "Mul");
    if (!reads_scalar(scaled, out_of(cube), 0.044715)) continue;
    const int inner = single_reader(scaled, "Add");
    if (inner < 0 || OtherInput(g.nodes[inner], out_of(scaled)) != value) continue;
    const int times_c = single_reader(inner, "Mul");
    if (!reads_scalar(times_c, out_of(inner), 0.7978845608028654)) continue;
    const int tanh = single_reader(times_c, "Tanh");
    const int plus_one = tanh < 0 ? -1 : single_reader(tanh, "Add");
    if (!reads_scalar(plus_one, out_of(tanh), 1.0)) continue;
    const int product = single_reader(plus_one, "Mul");
    if (product < 0) continue;
    nodes.insert(nodes.end(), {scaled, inner, times_c, tanh, plus_one, product});
    const int factor = OtherInput(g.nodes[product], out_of(plus_one));
    int result = product;  // the node writing the GELU's value
    if (factor == value) {  // x (1 + tanh(...)), then 0.5
      const int half = single_reader(product, "Mul");
      if (!reads_scalar(half, out_of(product), 0.5)) continue;
      nodes.push_back(half);
      result = half;
    } else {  // (0.5 x) (1 + tanh(...))
      int half = -1;
      for (int r : readers[value])
        if (g.nodes[r].op_type == "Mul" && out_of(r) == factor && reads_scalar(r, value, 0.5)) half = r;
      if (half < 0 || is_output[factor] || readers[factor].size() != 1) continue;
      nodes.push_back(half);
    }
    // x is read by these nodes only (the square reads it twice).
    std::vector<int> x_readers;
    for (int k : nodes)
      for (int v : g.nodes[k].inputs)
        if (v == value) x_readers.push_back(k);
    std::vector<int> all = readers[value];
    std::sort(all.begin(), all.end());
    std::sort(x_readers.begin(), x_readers.end());
    if (all != x_readers) continue;
    std::sort(nodes.begin(), nodes.end());
    if (nodes.back() != result) continue;  // the chain's value is written last
    return nodes;
  }
  return {};
}

// SiLU on `value` as exported: Sigmoid(x) and Mul(x, Sigmoid(x)) (either operand order), x read by
// those two only; the two nodes in graph order, or empty.
std::vector<int> MatchSwish(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output) {
  if (readers[value].size() != 2) return {};
  for (int sigmoid : readers[value]) {
    const Node& s = g.nodes[sigmoid];
    if (s.op_type != "Sigmoid" || s.inputs.size() != 1 || s.outputs.size() != 1 || s.outputs[0] < 0) continue;
    const int gate = s.outputs[0];
    if (is_output[gate] || readers[gate].size() != 1) continue;
    const int mul = readers[gate][0];
    const int other_reader = readers[value][0] == sigmoid ? readers[value][1] : readers[value][0];
    if (mul != other_reader || g.nodes[mul].op_type != "Mul" || OtherInput(g.nodes[mul], gate) != value || mul < sigmoid) continue;
    return {sigmoid, mul};
  }
  return {};
}

// Where each value is read: node indices (a node reading it twice counts twice).
std::vector<std::vector<int>> Readers(const Graph& g) {
  std::vector<std::vector<int>> readers(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) readers[v].push_back(static_cast<int>(i));
  return readers;
}

EpilogueActivation MatchEpilogueActivation(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output) {
  if (value < 0 || is_output[value]) return {};
  if (auto nodes = MatchGelu(g, value, readers, is_output); !nodes.empty()) return {nodes, "Gelu"};
  if (auto nodes = MatchGeluTanh(g, value, readers, is_output); !nodes.empty()) return {nodes, "GeluTanh"};
  if (auto nodes = MatchSwish(g, value, readers, is_output); !nodes.empty()) return {nodes, "Swish"};
  if (readers[value].size() != 1) return {};
  const Node& n = g.nodes[readers[value][0]];
  for (const char* op : {"Relu", "Sigmoid", "Tanh"})
    if (n.op_type == op && n.inputs.size() == 1 && n.outputs.size() == 1) return {{readers[value][0]}, op};
  return {};
}

}  // namespace tilebank::engine::model
