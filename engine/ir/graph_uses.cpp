#include "engine/ir/graph_uses.h"

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

}  // namespace tilebank::engine::model
