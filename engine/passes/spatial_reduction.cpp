#include "engine/passes/spatial_reduction.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "engine/ir/graph_uses.h"

namespace tilebank::engine::model {
namespace {

bool SpatialTensor(const Value& v) {
  if (!v.shape_known || v.kind != ValueKind::kTensor || v.dtype != "float32" || v.constant || v.shape.size() < 3 || v.shape.size() > 5)
    return false;
  for (int64_t d : v.shape)
    if (d <= 0) return false;
  return true;
}

int64_t SpatialElements(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin() + 2, shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

// The reduction's axes, normalized and sorted; nullopt when they are not known at load.
std::optional<std::vector<int64_t>> ReducedAxes(const Graph& g, const Node& n, int64_t rank) {
  std::vector<int64_t> axes = g.AttrInts(n, "axes", {});
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {  // opset 18's axes input
    if (!g.IsConstant(n.inputs[1])) return std::nullopt;
    const ConstTensor& c = *g.values[n.inputs[1]].constant;
    axes.clear();
    for (int64_t k = 0; k < c.size(); ++k) axes.push_back(static_cast<int64_t>(c.At(k)));
  }
  if (axes.empty()) {
    if (g.AttrInt(n, "noop_with_empty_axes", 0)) return std::nullopt;
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::vector<int64_t> SpatialAxes(size_t rank) {
  std::vector<int64_t> axes(rank - 2);
  std::iota(axes.begin(), axes.end(), int64_t{2});
  return axes;
}

}  // namespace

bool ReducesEverySpatialAxis(const Graph& g, const Node& n) {
  if (n.op_type.rfind("Reduce", 0) != 0 || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Value& x = g.values[n.inputs[0]];
  if (!SpatialTensor(x) || !g.values[n.outputs[0]].shape_known) return false;
  return ReducedAxes(g, n, static_cast<int64_t>(x.shape.size())) == SpatialAxes(x.shape.size());
}

bool ReducesChannelAxis(const Graph& g, const Node& n) {
  if (n.op_type.rfind("Reduce", 0) != 0 || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const Value& x = g.values[n.inputs[0]];
  if (!SpatialTensor(x) || !g.values[n.outputs[0]].shape_known) return false;
  return ReducedAxes(g, n, static_cast<int64_t>(x.shape.size())) == std::vector<int64_t>{1};
}

size_t LiftSpatialReductions(Graph* g) {
  const GraphUses u = UsesOf(*g);
  std::vector<size_t> lifted_readers(g->nodes.size(), 0);  // per Reshape: its readers now reading past it
  std::vector<std::vector<Node>> after(g->nodes.size());  // Reshapes back to a kept dim's rank, after node i
  size_t lifted = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Node& n = g->nodes[i];
    if (!ReducesEverySpatialAxis(*g, n)) continue;
    const int x = n.inputs[0], producer = u.producer[x];
    if (producer < 0 || g->nodes[producer].op_type != "Reshape" || g->nodes[producer].inputs.empty()) continue;
    const int y = g->nodes[producer].inputs[0];
    if (y < 0 || !SpatialTensor(g->values[y])) continue;
    const auto &from = g->values[y].shape, &to = g->values[x].shape;
    if (from[0] != to[0] || from[1] != to[1] || SpatialElements(from) != SpatialElements(to)) continue;
    n.inputs.resize(1);  // the axes go in the attribute (opset 17's form)
    n.inputs[0] = y;
    n.attrs["axes"] = SpatialAxes(from.size());
    if (g->AttrInt(n, "keepdims", 1) && from.size() != to.size()) {  // [N, C, 1...] at y's rank, reshaped to the output's
      const int out = n.outputs[0];
      Value kept = g->values[out];
      kept.name += "/kept";
      kept.shape = {from[0], from[1]};
      kept.shape.resize(from.size(), 1);
      n.outputs[0] = AddValue(g, std::move(kept));
      after[i].push_back(AliasReshape(g, n.outputs[0], out));
    }
    ++lifted_readers[producer];
    ++lifted;
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const int out = g->nodes[i].outputs.empty() ? -1 : g->nodes[i].outputs[0];
    const bool unread = lifted_readers[i] > 0 && lifted_readers[i] == u.readers[out].size() && !u.outputs.count(out);
    if (!unread) nodes.push_back(std::move(g->nodes[i]));
    for (Node& r : after[i]) nodes.push_back(std::move(r));
  }
  g->nodes = std::move(nodes);
  return lifted;
}

}  // namespace tilebank::engine::model
