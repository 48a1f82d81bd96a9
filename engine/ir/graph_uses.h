// Where each value of a graph comes from and goes: what the rewriting passes (engine/passes/) ask
// before they fuse nodes.
#pragma once
#include <cstddef>
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

}  // namespace tilebank::engine::model
