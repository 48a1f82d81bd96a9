#include "engine/passes/partition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/passes/attention_match.h"
#include "engine/ir/node_op_spec.h"
#include "engine/core/op_semantics.h"

namespace tilebank::engine::model {

namespace {

bool IsAnchor(const std::string& op_type) {
  const OpSemantics* s = SemanticsOf(op_type);
  return s && s->anchor;
}

bool IsUnaryEpilogue(const std::string& op_type) {
  const OpSemantics* s = SemanticsOf(op_type);
  return s && s->epilogue && s->role != OpRole::kBinaryElementwise;
}

bool IsBinaryEpilogue(const std::string& op_type) {
  const OpSemantics* s = SemanticsOf(op_type);
  return s && s->epilogue && s->role == OpRole::kBinaryElementwise;
}

// Whether `operand` broadcasts to `shape` without growing it (ONNX's multidirectional rule).
bool BroadcastsTo(const std::vector<int64_t>& operand, const std::vector<int64_t>& shape) {
  if (operand.size() > shape.size()) return false;
  for (size_t i = 0; i < operand.size(); ++i) {
    const int64_t d = operand[operand.size() - 1 - i], s = shape[shape.size() - 1 - i];
    if (d != s && d != 1) return false;
  }
  return true;
}

// Whether value `v` is a constant of one element within `tolerance` of `want`.
bool IsScalar(const Graph& g, int v, double want, double tolerance = 1e-6) {
  return v >= 0 && g.IsConstant(v) && g.values[v].constant->size() == 1 && std::fabs(g.values[v].constant->At(0) - want) <= tolerance;
}

// The other input of binary node `n` than `value` (-1 when `value` is not exactly one of them).
int OtherInput(const Node& n, int value) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == value && n.inputs[1] != value) return n.inputs[1];
  if (n.inputs[1] == value && n.inputs[0] != value) return n.inputs[0];
  return -1;
}

// `node` as the next epilogue step after `value`, or nothing when it cannot run inside the anchor.
std::optional<EpilogueStep> AsEpilogue(const Graph& g, const Node& node, int value) {
  if (node.outputs.empty() || node.outputs[0] < 0 || g.values[node.outputs[0]].shape != g.values[value].shape) return std::nullopt;
  if (g.values[node.outputs[0]].dtype != "float32" || !g.values[node.outputs[0]].shape_known) return std::nullopt;
  for (size_t k = 1; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0) return std::nullopt;
  EpilogueStep epilogue;
  ChainStep& step = epilogue.step;
  step.op_type = node.op_type;
  if (IsUnaryEpilogue(node.op_type)) {
    if (node.inputs.empty() || node.inputs[0] != value) return std::nullopt;
    if (node.op_type == "LeakyRelu") step.alpha = g.AttrFloat(node, "alpha", 0.01f);
    if (node.op_type == "Clip") {
      step.alpha = -std::numeric_limits<float>::infinity();
      step.beta = std::numeric_limits<float>::infinity();
      for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
        if (node.inputs[i] < 0) continue;
        if (!g.IsConstant(node.inputs[i]) || g.values[node.inputs[i]].constant->size() != 1) return std::nullopt;
        (i == 1 ? step.alpha : step.beta) = static_cast<float>(g.values[node.inputs[i]].constant->At(0));
      }
    } else if (node.inputs.size() != 1) {
      return std::nullopt;
    }
    return epilogue;
  }
  if (!IsBinaryEpilogue(node.op_type) || node.inputs.size() != 2) return std::nullopt;
  // Sub and Div only with the chain on the left; Add and Mul (commutative) either way round. Not x op x.
  int other = OtherInput(node, value);
  if (other >= 0 && node.inputs[0] != value && !SemanticsOf(node.op_type)->commutative) other = -1;
  if (other < 0 || g.values[other].dtype != "float32" || !g.values[other].shape_known || !BroadcastsTo(g.values[other].shape, g.values[value].shape)) return std::nullopt;
  epilogue.operand = other;
  step.has_operand = true;
  step.operand_shape = g.values[other].shape;
  return epilogue;
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

// The description CanonicalizeGraph reads: each node's ATC form, with "inputs" naming the node that
// produces each operand or a graph input; constant operands of at most 4 elements (a scale, a
// bound) are part of the computation, so their values join the node's attributes.
// "input<N>", or with a leading '_' as often as it takes not to be a node's name (inputs naming a
// node refer to that node in the descriptor).
std::string OutsideName(size_t n, const std::map<int, std::string>& producer) {
  std::string name = "input" + std::to_string(n);
  for (bool clash = true; clash;) {
    clash = false;
    for (const auto& [value, node] : producer) clash |= node == name;
    if (clash) name = "_" + name;
  }
  return name;
}

nlohmann::json Describe(const Graph& g, const std::vector<int>& nodes) {
  std::map<int, std::string> producer;  // value -> name of the subgraph node writing it
  for (int i : nodes) producer[g.nodes[i].outputs[0]] = g.nodes[i].name;
  std::map<int, std::string> outside;   // value -> graph input name
  nlohmann::json list = nlohmann::json::array();
  for (int i : nodes) {
    const Node& n = g.nodes[i];
    auto op = NodeOpSpec(g, n);
    std::vector<int> values;
    if (op.ok()) values = op->input_values;
    else for (int v : n.inputs) if (v >= 0) values.push_back(v);
    nlohmann::json d = NodeDescription(g, n, values);
    d["inputs"] = nlohmann::json::array();
    for (size_t slot = 0; slot < values.size(); ++slot) {
      const int v = values[slot];
      if (auto it = producer.find(v); it != producer.end()) {
        d["inputs"].push_back(it->second);
        continue;
      }
      auto [it, fresh] = outside.emplace(v, OutsideName(outside.size(), producer));
      d["inputs"].push_back(it->second);
      if (g.IsConstant(v) && g.values[v].constant->size() <= 4) {
        std::vector<double> data;
        for (int64_t e = 0; e < g.values[v].constant->size(); ++e) data.push_back(g.values[v].constant->At(e));
        d["attr"].push_back({{"name", "const_input" + std::to_string(slot)}, {"type", "list_float"}, {"value", data}});
      }
    }
    list.push_back(std::move(d));
  }
  return {{"nodes", list}};
}

}  // namespace

int Subgraph::NodesOf(int fused) const {
  int nodes = 0;
  for (int k = 0; k < fused && k < static_cast<int>(steps.size()); ++k) nodes += steps[k].nodes;
  return nodes;
}

int Subgraph::OutputAfter(const Graph& graph, int fused) const {
  return graph.nodes[fused == 0 ? anchor : chain[NodesOf(fused) - 1]].outputs[0];
}

std::vector<Subgraph> PartitionSubgraphs(const Graph& g) {
  const auto readers = Readers(g);
  std::vector<bool> is_output(g.values.size(), false);
  for (int v : g.outputs) is_output[v] = true;
  std::vector<bool> taken(g.nodes.size(), false);
  std::vector<Subgraph> out;
  for (AttentionMatch& m : FindAttentionBlocks(g)) {
    Subgraph s;
    s.anchor = m.scores_matmul;
    for (int n : m.nodes)
      if (n != s.anchor) s.chain.push_back(n);
    EpilogueStep step;
    step.step.op_type = "Attention";
    step.nodes = static_cast<int>(s.chain.size());
    s.steps = {step};
    s.description = Describe(g, m.nodes);
    auto canonical = CanonicalizeGraph(s.description);
    if (!canonical.ok()) continue;
    s.canonical = std::move(canonical.value());
    s.attention = AttentionBinding{std::move(m.geometry), std::move(m.inputs)};
    for (int n : m.nodes) taken[n] = true;
    out.push_back(std::move(s));
  }
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const Node& anchor = g.nodes[a];
    if (!IsAnchor(anchor.op_type) || taken[a] || anchor.outputs.empty() || anchor.outputs[0] < 0) continue;
    if (g.values[anchor.outputs[0]].dtype != "float32" || !g.values[anchor.outputs[0]].shape_known || !NodeOpSpec(g, anchor).ok()) continue;
    Subgraph s;
    s.anchor = static_cast<int>(a);
    int value = anchor.outputs[0];
    while (!is_output[value]) {
      // Multi-node activations: each one step standing for its nodes.
      std::string activation = "Gelu";
      auto nodes = MatchGelu(g, value, readers, is_output);
      if (nodes.empty()) activation = "GeluTanh", nodes = MatchGeluTanh(g, value, readers, is_output);
      if (nodes.empty()) activation = "Swish", nodes = MatchSwish(g, value, readers, is_output);
      if (!nodes.empty()) {
        if (std::any_of(nodes.begin(), nodes.end(), [&](int n) { return taken[n]; })) break;
        EpilogueStep step;
        step.step.op_type = activation;
        step.nodes = static_cast<int>(nodes.size());
        s.chain.insert(s.chain.end(), nodes.begin(), nodes.end());
        s.steps.push_back(step);
        value = g.nodes[nodes.back()].outputs[0];
        continue;
      }
      if (readers[value].size() != 1) break;
      const int next = readers[value][0];
      if (taken[next]) break;
      auto step = AsEpilogue(g, g.nodes[next], value);
      if (!step) break;
      s.chain.push_back(next);
      s.steps.push_back(*step);
      value = g.nodes[next].outputs[0];
    }
    if (s.chain.empty()) continue;
    taken[a] = true;
    for (int c : s.chain) taken[c] = true;
    std::vector<int> nodes = {s.anchor};
    nodes.insert(nodes.end(), s.chain.begin(), s.chain.end());
    s.description = Describe(g, nodes);
    auto canonical = CanonicalizeGraph(s.description);
    if (!canonical.ok()) continue;  // a node the descriptor cannot carry: left unfused
    s.canonical = std::move(canonical.value());
    out.push_back(std::move(s));
  }
  return out;
}

Graph ExtractSubgraph(const Graph& g, const Subgraph& s) {
  Graph sub;
  sub.opset = g.opset;
  std::map<int, int> mapped;  // value in g -> value in sub
  auto map_value = [&](int v, bool as_input) {
    if (v < 0) return -1;
    if (auto it = mapped.find(v); it != mapped.end()) return it->second;
    const int id = static_cast<int>(sub.values.size());
    sub.values.push_back(g.values[v]);
    mapped[v] = id;
    if (as_input && !g.IsConstant(v)) sub.inputs.push_back(id);
    return id;
  };
  std::vector<int> nodes = {s.anchor};
  nodes.insert(nodes.end(), s.chain.begin(), s.chain.end());
  std::sort(nodes.begin(), nodes.end());  // an attention block's chain starts before its anchor
  std::set<int> produced;
  for (int i : nodes) produced.insert(g.nodes[i].outputs[0]);
  for (int i : nodes) {
    Node n = g.nodes[i];
    for (int& v : n.inputs) v = map_value(v, !produced.count(v));
    for (int& v : n.outputs) v = map_value(v, false);
    sub.nodes.push_back(std::move(n));
  }
  sub.outputs = {mapped.at(s.OutputAfter(g, static_cast<int>(s.chain.size())))};
  return sub;
}

}  // namespace tilebank::engine::model
