// A model's subgraphs on their own, for SGAT without the model (offline tuning, seed 001):
// `run --dump DIR` writes DIR/aoe_dump/<model>_subgraphs.json and `tune -j 1 --subgraphs FILE`
// tunes it on another machine of the same soc_version. The format (docs/SUBGRAPHS.md):
//   {"format": "tilebank.subgraphs", "version": 1, "model": NAME, "soc_version": SOC,
//    "subgraphs": [{"repo_key": "123", "name": anchor node, "occurrences": N,
//                   "nodes": [ATC single-op form of each node with "inputs"],
//                   "constants": [names among the nodes' inputs that are weights]}]}
// Weights are not written (their values do not change a subgraph's speed); reading gives them
// seeded random values, except constants of at most 4 elements, whose values are in the nodes'
// attributes ("const_input<slot>", Clip's "min" and "max") because they change the computation.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ir/graph.h"
#include "engine/passes/partition.h"

namespace tilebank::engine::model {

// One distinct subgraph of a model, as a graph of its own.
struct SubgraphTask {
  Graph graph;         // the subgraph alone (ExtractSubgraph), its chain's last output the output
  Subgraph subgraph;   // its partition within `graph`
  std::string name;    // the first occurrence's anchor node
  int occurrences = 0;
  double model_us = 0; // the time its occurrences take in the model (0: unknown)
};

// The distinct subgraphs of `graph` (PartitionSubgraphs), in order of first occurrence.
// `node_us[i]`, when given, is node i's time in the model.
std::vector<SubgraphTask> DistinctSubgraphs(const Graph& graph, const std::vector<double>& node_us = {});

// "Conv+Relu": the anchor's op type and its chain's.
std::string SubgraphOpType(const SubgraphTask& task);

nlohmann::json SubgraphFileJson(const std::vector<SubgraphTask>& tasks, const std::string& model_name, const std::string& soc_version);

// kInvalidInput naming the file and the subgraph when a field is missing or wrong, or when the
// nodes do not make the subgraph the repo_key says.
Result<std::vector<SubgraphTask>> ReadSubgraphFile(const std::string& path);

}  // namespace tilebank::engine::model
