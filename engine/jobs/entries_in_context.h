// A model job's operator entries judged where the model runs them: the model bound without (a) and
// with (b) the job's entries, timed in interleaved rounds (model::TimeInterleaved, each step's time
// kept per run). For each entry, the steps it changes are summed per run on each side (the sums of
// one round paired): the steps
// running its operator (fused chains included) and the steps reading their outputs, where a layout
// change or a lost fusion lands. The candidate was timed alone when it was tuned; here it runs with
// its real input layout, epilogue, prepacked weights and neighbours.
#pragma once
#include <string>
#include <vector>

#include "engine/core/sample_stats.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/model_session.h"

namespace tilebank::engine {

struct EntryInContext {
  std::string key;                       // FormatKey(kOp, ...)
  std::string node;                      // the first node running its operator in the model with it
  std::string precision = "fp32";        // what that step computes in with it (engine/core/precision_mode.h)
  double without_us = 0, with_us = 0;    // medians of the per-run sums
  double spread_us = 0;                  // the larger interquartile range of the two
  PairedDifference gain;                 // without - with, run by run (us), and its 95% interval
  int steps = 0;                         // steps summed with the entry
  // Faster with the entry beyond the spread (FasterBeyondSpread on the paired sums): the only
  // verdict under which it stays.
  bool Faster() const { return steps > 0 && FasterBeyondSpread(gain, without_us); }
};

// One judgement per key in `keys`, in that order.
std::vector<EntryInContext> JudgeEntriesInContext(const model::Executor& without, const model::Executor& with,
                                                  const model::InterleavedTiming& timing, const std::vector<std::string>& keys);
// The entries of `keys` judged as one: the steps of all of them and their readers summed per run
// (entries that only pay together, as convolutions handing bf16 values to each other). Its `key`
// and `node` are the first key's.
EntryInContext JudgeTogetherInContext(const model::Executor& without, const model::Executor& with, const model::InterleavedTiming& timing,
                                      const std::vector<std::string>& keys);

}  // namespace tilebank::engine
