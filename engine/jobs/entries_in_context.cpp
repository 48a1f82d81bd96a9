#include "engine/jobs/entries_in_context.h"

#include <set>

#include "engine/core/sample_stats.h"
#include "repo/key.h"

namespace tilebank::engine {
namespace {

// Whether binding `b` runs the operator of one of the bank keys `keys`.
bool RunsOperator(const model::NodeBinding& b, const std::set<std::string>& keys) { return b.op && keys.count(FormatKey(EntryKind::kOp, b.op->op.canonical.key)); }

// The names of the steps (and of the nodes fused into them) that run the operators of `keys`, and of
// the steps reading what those produce.
std::set<std::string> ChangedSteps(const model::Executor& ex, const std::set<std::string>& keys) {
  std::set<std::string> names;
  std::set<int> produced;
  const auto& bindings = ex.bindings();
  const auto& graph = ex.graph();
  for (const auto& b : bindings) {
    if (!RunsOperator(b, keys)) continue;
    names.insert(b.name);
    names.insert(b.fused_nodes.begin(), b.fused_nodes.end());
  }
  for (const auto& node : graph.nodes)
    if (names.count(node.name))
      for (int v : node.outputs) produced.insert(v);
  for (const auto& b : bindings) {
    if (b.node < 0) continue;
    for (int v : graph.nodes[b.node].inputs)
      if (produced.count(v)) names.insert(b.name);
  }
  return names;
}

// Per run, the time of the steps of `ex` whose name (or a fused node's) is in `names`; `steps`
// receives how many steps that is.
std::vector<double> RunSums(const model::Executor& ex, const model::ModelTiming& timing, const std::set<std::string>& names, int* steps) {
  std::vector<double> sums;
  *steps = 0;
  const auto& bindings = ex.bindings();
  for (size_t k = 0; k < bindings.size() && k < timing.node_us.size(); ++k) {
    bool changed = names.count(bindings[k].name) > 0;
    for (const auto& fused : bindings[k].fused_nodes) changed = changed || names.count(fused) > 0;
    if (!changed) continue;
    ++*steps;
    const auto& runs = timing.node_us[k];
    if (sums.size() < runs.size()) sums.resize(runs.size(), 0.0);
    for (size_t r = 0; r < runs.size(); ++r) sums[r] += runs[r];
  }
  return sums;
}

// The entries of `keys` judged as one (`key`: the first of them).
EntryInContext Judge(const model::Executor& without, const model::Executor& with, const model::InterleavedTiming& timing, const std::set<std::string>& keys,
                     const std::string& first) {
  EntryInContext e;
  e.key = first;
  for (const auto& b : with.bindings())
    if (RunsOperator(b, {first})) {
      e.node = b.name;
      e.precision = b.precision;
      break;
    }
  std::set<std::string> names = ChangedSteps(with, keys);
  const std::set<std::string> before = ChangedSteps(without, keys);
  names.insert(before.begin(), before.end());
  int steps_without = 0;
  const auto a = RunSums(without, timing.a, names, &steps_without);
  const auto b = RunSums(with, timing.b, names, &e.steps);
  if (!a.empty() && !b.empty()) {
    const SampleSummary sa = Summarize(a), sb = Summarize(b);
    e.without_us = sa.median;
    e.with_us = sb.median;
    e.spread_us = std::max(sa.spread, sb.spread);
    e.gain = PairedDifferenceOf(a, b);
  }
  return e;
}

}  // namespace

std::vector<EntryInContext> JudgeEntriesInContext(const model::Executor& without, const model::Executor& with,
                                                  const model::InterleavedTiming& timing, const std::vector<std::string>& keys) {
  std::vector<EntryInContext> judged;
  for (const std::string& key : keys) judged.push_back(Judge(without, with, timing, {key}, key));
  return judged;
}

EntryInContext JudgeTogetherInContext(const model::Executor& without, const model::Executor& with, const model::InterleavedTiming& timing,
                                      const std::vector<std::string>& keys) {
  return Judge(without, with, timing, std::set<std::string>(keys.begin(), keys.end()), keys.empty() ? std::string() : keys.front());
}

}  // namespace tilebank::engine
