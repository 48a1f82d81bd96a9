// What a tuning job on a whole model (SGAT's and OPAT's) decides and reports at its end: the model
// timed without and with the job's entries in interleaved runs (model::TimeInterleaved), so that
// the machine's drift falls on both alike.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/runtime/model_session.h"

namespace tilebank::engine {

// How a job times the model without (a) and with (b) its entries; empty: model::TimeInterleaved
// with the job's warm-up and repeats. Tests replace it to see a take-back happen.
using TimeModels = std::function<Result<model::InterleavedTiming>(model::Executor& without, model::Executor& with,
                                                                   const std::vector<TypedTensor>& inputs)>;

struct ModelVerdict {
  double without_ms = 0, with_ms = 0;  // medians
  double spread_ms = 0;                // the larger of the two interquartile ranges
  int runs = 0;                        // each

  static ModelVerdict Of(const model::InterleavedTiming& timing);  // a: without, b: with
  // Faster with the entries by more than the spread: the only verdict under which a job keeps them
  // (a tuned choice never loses: one that shows no gain is taken back too).
  bool Faster() const { return with_ms < without_ms - spread_ms; }
  // The medians differ by no more than the spread: neither a gain nor a loss was measured.
  bool WithinSpread() const;
  // The improvement reported ("Performance improved by"), AOE's before/after - 1: 0 when the
  // medians differ by no more than the spread (neither a gain nor a loss was measured), and when
  // the entries were taken back (the model runs as before).
  double ReportedPercent(bool taken_back) const;
  std::string ReportedText(bool taken_back) const;
  // "6.477 ms without this run's 3 entries, 6.370 ms with them (interleaved whole-model runs,
  // median of 10 each, spread 0.210 ms)"
  std::string Measured(size_t entries) const;
};

}  // namespace tilebank::engine
