// What a tuning job on a whole model (SGAT's and OPAT's) decides and reports at its end: the model
// timed without and with the job's entries in interleaved runs (model::TimeInterleaved), so that
// the machine's drift falls on both alike. The gain is judged round by round (the two runs of a
// round side by side), not median against median: a noisy machine spreads each side's runs far
// wider than it moves the difference between neighbours, and more rounds narrow that difference.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/core/sample_stats.h"
#include "engine/runtime/model_session.h"

namespace tilebank::engine {

// How a job times the model without (a) and with (b) its entries; empty: model::TimeInterleaved
// with the job's warm-up and repeats. Tests replace it to see a take-back happen.
using TimeModels = std::function<Result<model::InterleavedTiming>(model::Executor& without, model::Executor& with,
                                                                   const std::vector<TypedTensor>& inputs)>;

struct ModelVerdict {
  double without_ms = 0, with_ms = 0;  // medians
  double spread_ms = 0;                // the larger of the two interquartile ranges
  PairedDifference gain;               // without - with, round by round (ms), and its 95% interval
  int runs = 0;                        // each

  static ModelVerdict Of(const model::InterleavedTiming& timing);  // a: without, b: with
  // Faster with the entries beyond the spread (FasterBeyondSpread: the paired gain's interval above
  // zero, the gain at least 1%): the only verdict under which a job keeps them (a tuned choice
  // never loses: one that shows no gain is taken back too).
  bool Faster() const { return FasterBeyondSpread(gain, without_ms); }
  // Slower with them beyond the spread: the paired gain's interval below zero.
  bool Slower() const { return SlowerBeyondSpread(gain); }
  // Neither faster nor slower beyond the spread: no gain and no loss measured.
  bool WithinSpread() const { return !Faster() && !Slower(); }
  // The improvement reported ("Performance improved by"), AOE's before/after - 1 with "after" the
  // time without the entries less the paired gain (the quantity the verdict judged: the medians'
  // ratio can disagree with it on a noisy machine): 0 when neither a gain nor a loss was measured,
  // and when the entries were taken back (the model runs as before).
  double ReportedPercent(bool taken_back) const;
  std::string ReportedText(bool taken_back) const;
  // The result time reported beside it, so that baseline / result - 1 is the reported improvement:
  // the time without the entries less the paired gain, or the time without where none is reported.
  double ReportedResultMs(bool taken_back) const;
  // "6.477 ms without this run's 3 entries, 6.370 ms with them (interleaved whole-model runs,
  // median of 10 each, spread 0.210 ms; gain 0.101 ms a round, 95% interval 0.052 to 0.160 ms)"
  std::string Measured(size_t entries) const;
};

}  // namespace tilebank::engine
