#include "engine/tuning/subgraph_tuner.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/backends/halide/halide_fused_gemm.h"
#include "engine/backends/library_impls.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/node_op_spec.h"
#include "engine/tuning/search_strategy.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/search_loop.h"

namespace tilebank::engine {

namespace {

using model::Executor;
using model::Graph;
using model::Subgraph;

// The subgraph measured once under one fusion choice.
struct Measured {
  bool fused = false;  // the anchor runs with steps inside it (false: the implementation could not, or fuse 0)
  size_t fused_nodes = 0;  // how many chain nodes run inside it
  bool lowered = false;    // some step computes in bf16 (a bank entry of OPAT's under allow_fp32_to_bf16)
  Measurement time;    // the sum of the steps' medians: input copies are not the subgraph's
  std::vector<Tensor> outputs;
};

// `choice` nullopt: what runs without a graph entry (the built-in fusion, or none).
Result<Measured> MeasureSubgraph(const Graph& graph, const model::PolicyLookup& ops, const std::optional<model::FusionChoice>& choice,
                                 const std::vector<Tensor>& inputs, const SubgraphTuneOptions& o) {
  auto executor = Executor::Load(graph, ops, [&choice](const Subgraph&) { return choice; });
  if (!executor.ok()) return executor.status();
  Measured m;
  std::vector<const Tensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  TB_RETURN_IF_ERROR((*executor)->Run(in, &m.outputs));
  m.lowered = (*executor)->LowerPrecisionSteps() > 0;
  for (const auto& b : (*executor)->bindings())
    if (b.template_id == kFusedTemplateId) {
      m.fused = true;
      m.fused_nodes += b.fused_nodes.size();
    }
  auto timing = model::TimeModel(**executor, inputs, o.warmup, o.repeats);
  if (!timing.ok()) return timing.status();
  for (double us : timing->node_median_us) m.time.median_us += us;
  m.time.spread_us = timing->spread_ms * 1000;
  m.time.runs = static_cast<uint32_t>(timing->runs);
  return m;
}

model::FusionChoice Candidate(const FusedPolicy& policy) { return {policy, "candidate"}; }

// `ops`, except that the anchor's op type runs in oneDNN wherever oneDNN supports it.
model::PolicyLookup WithAnchorInOneDnn(const model::PolicyLookup& ops, const std::string& anchor_type) {
  return [ops, anchor_type](const OpSpec& op) -> std::optional<model::FoundPolicy> {
    if (op.op_type != anchor_type || !OneDnnImpl().Supports(op).ok()) return ops ? ops(op) : std::nullopt;
    model::FoundPolicy found;
    found.entry.template_id = OneDnnImpl().id();
    found.entry.template_version = OneDnnImpl().version();
    found.entry.policy = OneDnnImpl().DefaultPolicy(op);
    return found;
  };
}

}  // namespace

Result<SubgraphOutcome> TuneSubgraph(const Graph& graph, const Subgraph& s, const model::PolicyLookup& ops, const SubgraphTuneOptions& o) {
  const std::vector<Tensor> inputs = model::RandomInputs(graph, 7);
  // What runs without an entry first: when it fuses nothing, it is the unfused run too.
  auto builtin = MeasureSubgraph(graph, ops, std::nullopt, inputs, o);
  const bool builtin_fuses = builtin.ok() && builtin->fused;
  auto unfused = builtin_fuses || !builtin.ok() ? MeasureSubgraph(graph, ops, Candidate(OneDnnFusion(0)), inputs, o) : std::move(builtin);
  if (!unfused.ok()) return unfused.status();
  std::vector<Measurement> baselines = {unfused->time};
  const std::string anchor_type = graph.nodes[s.anchor].op_type;
  if (auto library = MeasureSubgraph(graph, WithAnchorInOneDnn(ops, anchor_type), Candidate(OneDnnFusion(0)), inputs, o); library.ok())
    baselines.push_back(library->time);
  if (builtin_fuses) baselines.push_back(builtin->time);
  SubgraphOutcome out;
  out.strategy = "exhaustive";
  out.baseline = *std::min_element(baselines.begin(), baselines.end(),
                                   [](const Measurement& a, const Measurement& b) { return a.median_us < b.median_us; });

  // Whether another candidate may be tried: within `trials` and the job's time.
  auto may_try = [&] { return out.tried < o.trials && !(o.out_of_time && o.out_of_time()); };
  // A candidate counts when it runs fused and computes what the unfused subgraph does.
  auto consider = [&](const FusedPolicy& policy) -> double {
    const std::string name = PolicyText(policy.Knobs());
    auto candidate = MeasureSubgraph(graph, ops, Candidate(policy), inputs, o);
    ++out.tried;
    SubgraphTrial trial{out.tried, name, std::nullopt, "", 0, out.baseline.median_us};
    auto told = [&](double us) {
      trial.best_us = out.found ? out.best.median_us : 0;
      if (o.on_trial) o.on_trial(trial);
      return us;
    };
    if (!candidate.ok()) {
      trial.failure = candidate.status().message();
    } else if (!candidate->fused) {
      trial.failure = policy.impl + " has no fused kernel for it";
    } else if (const model::Comparison check = model::CompareTensors(candidate->outputs, unfused->outputs, unfused->lowered || candidate->lowered);
               !check.ok) {
      trial.failure = "wrong result: differs from the unfused subgraph: " + check.worst;
    }
    if (!trial.failure.empty()) {
      out.failure = name + ": " + trial.failure;
      return told(INFINITY);
    }
    trial.time = candidate->time;
    const double us = candidate->time.median_us;
    if (!out.found || us < out.best.median_us) {
      out.found = true;
      out.policy = policy;
      out.best = candidate->time;
    }
    return told(us);
  };
  if (s.attention) {  // the tiles of the fused block; its default is the built-in fusion, measured already
    out.strategy = "exhaustive";
    const Policy builtin_tiles = DefaultAttentionPolicy(s.attention->geometry);
    for (const Policy& tiles : AttentionPolicies(s.attention->geometry))
      if (may_try() && (tiles != builtin_tiles || !builtin_fuses)) consider({1, "attention", tiles});
    return out;
  }
  const int steps = static_cast<int>(s.steps.size());
  for (int k = 1; k <= steps && may_try(); ++k)  // the built-in fusion's own count is measured already
    if (!builtin_fuses || builtin->fused_nodes != static_cast<size_t>(s.NodesOf(k))) consider(OneDnnFusion(k));
  auto anchor = model::NodeOpSpec(graph, graph.nodes[s.anchor]);
  const OpTemplate* gemm = anchor.ok() ? HalideGemmTemplateFor(anchor->op) : nullptr;
  if (gemm && may_try()) {
    out.strategy = "exhaustive+GA";
    const SearchSpace space = gemm->Space(anchor->op);
    std::vector<Config> seeds;
    Config seed;
    if (auto found = ops ? ops(anchor->op) : std::nullopt;
        found && found->entry.template_id == gemm->id() && space.ConfigOf(found->entry.policy, &seed))
      seeds.push_back(seed);
    if (space.ConfigOf(gemm->DefaultPolicy(anchor->op), &seed)) seeds.push_back(seed);
    auto search = MakeStrategy(StrategyKind::kGenetic, space, o.seed, seeds);
    RunSearch(*search, o.trials - out.tried, [&](const Config& c) { return consider({steps, "halide", space.PolicyOf(c)}); },
              o.out_of_time);
  }
  return out;
}

}  // namespace tilebank::engine
