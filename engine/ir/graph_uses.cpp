#include "engine/ir/graph_uses.h"

#include <algorithm>

namespace tilebank::engine::model {

GraphUses UsesOf(const Graph& g) {
  GraphUses u;
  u.producer.assign(g.values.size(), -1);
  u.readers.assign(g.values.size(), {});
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int v : g.nodes[i].outputs)
      if (v >= 0) u.producer[v] = static_cast<int>(i);
    for (int v : g.nodes[i].inputs)
      if (v >= 0) u.readers[v].push_back(i);
  }
  u.outputs.insert(g.outputs.begin(), g.outputs.end());
  return u;
}

void ReplaceNodes(Graph* g, const std::vector<int>& nodes, Node replacement, std::vector<bool>* drop) {
  const int last = *std::max_element(nodes.begin(), nodes.end());
  for (int n : nodes) (*drop)[n] = n != last;
  g->nodes[last] = std::move(replacement);
}

void EraseNodes(Graph* g, const std::function<bool(size_t)>& dropped) {
  std::vector<Node> kept;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (!dropped(i)) kept.push_back(std::move(g->nodes[i]));
  g->nodes = std::move(kept);
}

size_t FuseEachNode(Graph* g, const std::function<bool(size_t node, const GraphUses& uses, std::vector<bool>* drop)>& fuse) {
  size_t fused = 0;
  std::vector<bool> drop(g->nodes.size(), false);
  const GraphUses u = UsesOf(*g);
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (!drop[i] && fuse(i, u, &drop)) ++fused;
  if (fused) EraseNodes(g, [&](size_t i) { return drop[i]; });
  return fused;
}

int AddValue(Graph* g, Value v) {
  g->values.push_back(std::move(v));
  return static_cast<int>(g->values.size()) - 1;
}

int AddConstant(Graph* g, const std::string& name, ConstTensor c, const std::string& dtype) {
  Value v;
  v.name = name;
  v.shape = c.shape;
  v.dtype = dtype;
  v.constant = std::move(c);
  return AddValue(g, std::move(v));
}

Node AliasReshape(Graph* g, int from, int to) {
  const std::vector<int64_t>& shape = g->values[to].shape;
  const int target = AddValue(g, Value{g->values[to].name + "/shape", {static_cast<int64_t>(shape.size())}, "int64",
                                       ConstTensor::Ints({static_cast<int64_t>(shape.size())}, shape)});
  Node n;
  n.name = g->values[to].name + "/reshape";
  n.op_type = "Reshape";
  n.inputs = {from, target};
  n.outputs = {to};
  return n;
}

}  // namespace tilebank::engine::model
