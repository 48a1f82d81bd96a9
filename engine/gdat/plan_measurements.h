// Plans measured in a running training job (python/tilebank/gdat_tune.py writes them; `tune -j 4
// --gradients P --measured M.json` keeps the winner). File (JSON):
//   {"plans": [{"plan": "ddp", "ends": "3,10,61",
//               "iteration_ms": [...],   // forward start to the next forward start, one per iteration
//               "finish_ms":    [...],   // backward start to the last AllReduce done
//               "hangover_ms":  [...],   // the last gradient ready to the last AllReduce done
//               "finalist": true},       // optional, true when absent: false for a plan a round
//              ...]}                     // of the tuning dropped (reported, never kept)
// One plan must be named "ddp" (PyTorch DDP's default plan, the baseline) and be a finalist; each
// plan's lists hold the same number of samples, at least one, none negative.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/sample_stats.h"
#include "base/status.h"

namespace tilebank::engine {

struct MeasuredPlan {
  std::string name;
  std::vector<size_t> ends;
  std::vector<double> iteration_ms, finish_ms, hangover_ms;
  bool finalist = true;  // measured to the end of the tuning; only a finalist may be kept
  SampleSummary iteration() const { return Summarize(iteration_ms); }
  SampleSummary finish() const { return Summarize(finish_ms); }
  SampleSummary hangover() const { return Summarize(hangover_ms); }
};

// kInvalidInput naming the file and the field for anything missing or wrong, ends that do not fit
// `gradient_count` gradients included, and for a file without a "ddp" finalist.
Result<std::vector<MeasuredPlan>> ReadPlanMeasurements(const std::string& path, size_t gradient_count);

// The plan named "ddp" in `plans` (ReadPlanMeasurements makes sure there is one).
const MeasuredPlan& DdpBaseline(const std::vector<MeasuredPlan>& plans);

// The finalist with the lowest median iteration time (DDP's plan when none is lower).
const MeasuredPlan& FastestFinalist(const std::vector<MeasuredPlan>& plans);

// Whether `plan` iterates faster than `base` beyond the noise: its median at least `min_gain`
// (a fraction) below base's, and its 75th percentile below base's 25th.
bool ClearlyFaster(const MeasuredPlan& plan, const MeasuredPlan& base, double min_gain);

}  // namespace tilebank::engine
