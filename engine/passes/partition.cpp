#include "engine/passes/partition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/passes/activation_match.h"
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
