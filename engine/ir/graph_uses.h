// Where each value of a graph comes from and goes: what the rewriting passes (engine/passes/) ask
// before they fuse nodes.
#pragma once
#include <cstddef>
#include <functional>
#include <set>
#include <vector>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

struct GraphUses {
  std::vector<int> producer;                 // value -> node writing it (-1: none)
  std::vector<std::vector<size_t>> readers;  // value -> nodes reading it (a node reading it twice, twice)
  std::set<int> outputs;                     // the graph's outputs

  // Read once, by one node, and not a graph output: a fused node may swallow its producer.
  bool Private(int v) const { return v >= 0 && readers[v].size() == 1 && !outputs.count(v); }
};

GraphUses UsesOf(const Graph& g);

// A fusion's rewrite, made while the pass still reads node indices: `replacement` takes the place of
// the last of `nodes` (its inputs are all written before the first), the others are marked in `drop`
// (sized to the graph's nodes) for EraseNodes.
void ReplaceNodes(Graph* g, const std::vector<int>& nodes, Node replacement, std::vector<bool>* drop);
// Removes the nodes `dropped` names by index, the others kept in order.
void EraseNodes(Graph* g, const std::function<bool(size_t)>& dropped);
// A fusion pass's walk: fuse(i, uses, drop) for each node i not yet in `drop`, in order, returning
// whether it rewrote from there (with ReplaceNodes); `uses` are the graph's before any rewrite. The
// dropped nodes are erased at the end. Returns how many rewrites were made.
size_t FuseEachNode(Graph* g, const std::function<bool(size_t node, const GraphUses& uses, std::vector<bool>* drop)>& fuse);
// Appends `v` to the graph's values; returns its index.
int AddValue(Graph* g, Value v);
// Appends a constant value named `name` holding `c` (of ONNX element type `dtype`); returns its index.
int AddConstant(Graph* g, const std::string& name, ConstTensor c, const std::string& dtype = "float32");
// A Reshape node (an alias at run time) of value `from` into value `to`'s shape, named after `to`,
// the shape a new constant value; the caller places the node.
Node AliasReshape(Graph* g, int from, int to);

}  // namespace tilebank::engine::model
