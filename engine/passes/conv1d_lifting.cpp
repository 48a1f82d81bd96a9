#include "engine/passes/conv1d_lifting.h"

#include <algorithm>
#include <deque>
#include <set>

#include "engine/ir/graph_uses.h"

namespace tilebank::engine::model {
namespace {

// Ops that compute the same on [N, C, 1, L] as on [N, C, L] once their attributes are lifted (see
// LiftAttributes), every input lifted by LiftedShape.
const std::set<std::string>& LiftableOps() {
  static const std::set<std::string> ops = {
      "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Concat",
      "BatchNormalization", "FusedBatchNormalization", "InstanceNormalization", "FusedGroupNormalization",
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu",
      "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Gelu", "Erf",
      "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Neg", "Abs", "Exp", "Sqrt", "Identity"};
  return ops;
}

// An operand's shape once its node runs in 2-D: broadcasting aligns shapes at their last axis, so
// the height axis goes before the last of a shape of rank 2 or more ([N, C, L] -> [N, C, 1, L],
// [C, 1] -> [C, 1, 1]); a scalar or a row of L stays as it is.
std::vector<int64_t> LiftedShape(std::vector<int64_t> shape) {
  if (shape.size() >= 2) shape.insert(shape.end() - 1, 1);
  return shape;
}

bool StaticFloat(const Value& v) { return v.shape_known && v.kind == ValueKind::kTensor && v.dtype == "float32"; }

bool IsConv1d(const Graph& g, const Node& n) {
  return n.op_type == "Conv" && n.inputs.size() >= 2 && n.inputs[0] >= 0 && n.inputs[1] >= 0 && g.values[n.inputs[0]].shape.size() == 3 &&
         g.values[n.inputs[1]].shape.size() == 3;
}

// Whether `n` can run in 2-D: a liftable op whose outputs are float32 [N, C, L] of static shape and
// whose inputs have static shapes (a 1-D window op: on a 1-D input, its one optional output unused).
bool Liftable(const Graph& g, const Node& n) {
  if (!LiftableOps().count(n.op_type) || n.outputs.empty() || n.outputs[0] < 0) return false;
  if (n.op_type == "MaxPool" && n.outputs.size() > 1 && n.outputs[1] >= 0) return false;  // Indices count in the 1-D layout
  for (size_t k = 0; k < n.outputs.size(); ++k)
    if (n.outputs[k] >= 0 && (k > 0 || !StaticFloat(g.values[n.outputs[k]]) || g.values[n.outputs[k]].shape.size() != 3)) return false;
  for (int v : n.inputs)
    if (v >= 0 && (!g.values[v].shape_known || g.values[v].kind != ValueKind::kTensor)) return false;
  const bool window = n.op_type == "Conv" || n.op_type == "MaxPool" || n.op_type == "AveragePool";
  if (window && (n.inputs[0] < 0 || g.values[n.inputs[0]].shape.size() != 3)) return false;
  if (n.op_type == "Conv" && !IsConv1d(g, n)) return false;
  return true;
}

// The node's attributes for [N, C, 1, L]: window attributes gain the height axis (kernel 1, stride 1,
// dilation 1, pads 0), a Concat's axis past the channels moves one on.
void LiftAttributes(Node* n) {
  auto prepend = [&](const char* name, int64_t value) {
    auto it = n->attrs.find(name);
    if (it == n->attrs.end() || !it->is_array() || it->size() != 1) return;
    n->attrs[name] = std::vector<int64_t>{value, (*it)[0].get<int64_t>()};
  };
  prepend("kernel_shape", 1);
  prepend("strides", 1);
  prepend("dilations", 1);
  auto pads = n->attrs.find("pads");
  if (pads != n->attrs.end() && pads->is_array() && pads->size() == 2)
    n->attrs["pads"] = std::vector<int64_t>{0, (*pads)[0].get<int64_t>(), 0, (*pads)[1].get<int64_t>()};
  if (n->op_type == "Concat") {
    int64_t axis = n->attrs.value("axis", int64_t{1});
    if (axis < 0) axis += 3;
    n->attrs["axis"] = axis >= 2 ? axis + 1 : axis;
  }
}

// The nodes that run in 2-D: the liftable nodes connected through values to a 1-D Conv.
std::vector<bool> Region(const Graph& g, const GraphUses& u) {
  std::vector<bool> liftable(g.nodes.size()), in_region(g.nodes.size(), false);
  std::deque<size_t> queue;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    liftable[i] = Liftable(g, g.nodes[i]);
    if (liftable[i] && g.nodes[i].op_type == "Conv") in_region[i] = true, queue.push_back(i);
  }
  auto visit = [&](int node) {
    if (node >= 0 && liftable[node] && !in_region[node]) in_region[node] = true, queue.push_back(static_cast<size_t>(node));
  };
  while (!queue.empty()) {
    const Node& n = g.nodes[queue.front()];
    queue.pop_front();
    for (int v : n.inputs)
      if (v >= 0 && g.values[v].shape.size() == 3 && !g.IsConstant(v)) {
        visit(u.producer[v]);
        for (size_t r : u.readers[v]) visit(static_cast<int>(r));
      }
    for (int v : n.outputs)
      if (v >= 0)
        for (size_t r : u.readers[v]) visit(static_cast<int>(r));
  }
  return in_region;
}

}  // namespace

size_t LiftConv1d(Graph* g) {
  const GraphUses u = UsesOf(*g);
  const std::vector<bool> in_region = Region(*g, u);
  const size_t lifted = static_cast<size_t>(std::count(in_region.begin(), in_region.end(), true));
  if (lifted == 0) return 0;
  auto read_outside = [&](int v) {
    if (u.outputs.count(v)) return true;
    return std::any_of(u.readers[v].begin(), u.readers[v].end(), [&](size_t r) { return !in_region[r]; });
  };
  std::vector<int> twin(g->values.size(), -1);  // value -> its lifted twin
  std::vector<std::vector<Node>> after(g->nodes.size() + 1);  // Reshapes placed after node i (slot 0: before every node)
  auto lifted_value = [&](int v) {
    Value copy = g->values[v];
    copy.name += "/2d";
    copy.shape = LiftedShape(copy.shape);
    if (copy.constant) copy.constant->shape = copy.shape;
    return AddValue(g, std::move(copy));
  };
  // What the region's nodes read: lifted in place (a constant only they read), or a lifted twin (a
  // constant copied, a value reshaped after the node writing it).
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!in_region[i]) continue;
    for (int& v : g->nodes[i].inputs) {
      if (v < 0 || g->values[v].shape.size() < 2) continue;
      const int producer = u.producer[v];
      if (producer >= 0 && in_region[producer]) continue;  // lifted with its producer below
      if (twin[v] < 0) {
        if (g->IsConstant(v) && !read_outside(v)) {
          g->values[v].shape = LiftedShape(g->values[v].shape);
          g->values[v].constant->shape = g->values[v].shape;
          twin[v] = v;
        } else {
          twin[v] = lifted_value(v);  // a constant: copied with its data
          if (!g->IsConstant(v)) after[producer + 1].push_back(AliasReshape(g, v, twin[v]));
        }
      }
      v = twin[v];
    }
  }
  // What they write: lifted in place when only the region reads it, else written lifted and
  // reshaped back for the other readers (and the graph's outputs, which keep their names).
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!in_region[i]) continue;
    for (int& v : g->nodes[i].outputs) {
      if (v < 0) continue;
      if (!read_outside(v)) {
        g->values[v].shape = LiftedShape(g->values[v].shape);
        continue;
      }
      const int outside = v;
      const int inside = lifted_value(outside);
      for (size_t r : u.readers[outside])
        if (in_region[r])
          for (int& input : g->nodes[r].inputs)
            if (input == outside) input = inside;
      v = inside;
      after[i + 1].push_back(AliasReshape(g, inside, outside));
    }
    LiftAttributes(&g->nodes[i]);
  }
  std::vector<Node> nodes;
  for (Node& n : after[0]) nodes.push_back(std::move(n));
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    nodes.push_back(std::move(g->nodes[i]));
    for (Node& n : after[i + 1]) nodes.push_back(std::move(n));
  }
  g->nodes = std::move(nodes);
  return lifted;
}

}  // namespace tilebank::engine::model
