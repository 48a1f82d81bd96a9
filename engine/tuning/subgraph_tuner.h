// Tunes one subgraph (SGAT's task; engine/passes/partition.h): how much of its epilogue chain runs
// inside the anchor, and in which kernel. The subgraph runs alone as a graph with the policies
// `ops` gives its operators.
//
// Measured first: the subgraph unfused (its outputs are the reference every candidate is checked
// against before it is timed, within bf16's tolerance where either computes a step in bf16), unfused with the anchor in oneDNN (so that fusion must also beat
// the library OPAT could pick for the anchor alone), and with the built-in fusion (what runs
// without a graph entry: engine/runtime/executor.h). The fastest of them is the baseline. Then,
// within `trials` candidates: 1, 2, ... steps of the chain as oneDNN post-ops (but the count the
// built-in fusion runs, which is a baseline already), and for MatMul and
// Gemm anchors the whole chain in a Halide GEMM's epilogue with the anchor's knobs searched by GA
// (engine/tuning/search_loop.h), seeded with the anchor's bank policy and the template's default.
// An attention block (Subgraph::attention) has one candidate per tiling of its fused kernel
// (engine/backends/onednn/attention_kernel.h: AttentionPolicies), the default being the built-in fusion.
// Never proposed: fuse 0 (nothing fused) against a built-in fusion that is slower alone. Alone,
// the subgraph's output leaves in row-major order either way; in the model, an unfused step between
// oneDNN convolutions costs a reorder on each side (MobileNetV2: two such entries, each 4-7% faster
// alone, made the model 16% slower). A fuse 0 entry imported by hand is honoured.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/backends/fused_policy.h"
#include "engine/runtime/executor.h"
#include "engine/ir/graph.h"
#include "engine/passes/partition.h"
#include "engine/tuning/runner.h"

namespace tilebank::engine {

// One fused candidate measured: its knobs ("fuse=2,impl=onednn"), its time when it ran fused and
// matched the unfused subgraph, else why not.
struct SubgraphTrial {
  int trial = 0;
  std::string policy;
  std::optional<Measurement> time;
  std::string failure;
  double best_us = 0, baseline_us = 0;  // the best so far (0: none) and the baseline to beat
};

struct SubgraphTuneOptions {
  int trials = 48;  // candidates measured at most
  int warmup = 3, repeats = 20;
  uint64_t seed = 14;
  std::function<void(const SubgraphTrial&)> on_trial;  // after each candidate
  // Asked before each candidate once the baselines are measured: true leaves the rest untried (the
  // job's time budget ran out); the best so far is the outcome.
  std::function<bool()> out_of_time;
};

struct SubgraphOutcome {
  Measurement baseline;  // the fastest of the baselines above
  bool found = false;    // some candidate ran as asked and computed what the unfused subgraph does
  FusedPolicy policy;    // the fastest such candidate
  Measurement best;
  int tried = 0;
  std::string strategy;  // "exhaustive" (oneDNN post-ops) or "exhaustive+GA" (and the Halide GEMM)
  std::string failure;   // the last candidate that failed or differed, and why
};

// `graph` is the subgraph alone (model::ExtractSubgraph), `subgraph` its partition in it. Fails
// when the subgraph does not run unfused.
Result<SubgraphOutcome> TuneSubgraph(const model::Graph& graph, const model::Subgraph& subgraph, const model::PolicyLookup& ops,
                                     const SubgraphTuneOptions& options);

}  // namespace tilebank::engine
