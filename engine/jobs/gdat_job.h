// GDAT offline (`tune -j 4 --gradients PROFILE.json`, job type 4): plans the gradient fusion of a
// profile recorded elsewhere (engine/gdat/gradient_profile.h), as AOE tunes GDAT from collected
// data. The AllReduce cost model is fitted to the profile's sweep, the DP planner gives the best
// split per segment count (engine/gdat/fusion_plan.h), and the best, if it beats PyTorch DDP's
// default plan under the model by the job's margin, goes into the bank as a grad entry (template
// gdat.split, verified "model"). The anchors' predictions are in the result file,
// aoe_result_gdat_{timestamp}_{pid}.json. A bank entry verified "measured" (in a running job) is
// not replaced by a prediction.
//
// With `measured_path` (plans measured in the running job, engine/gdat/plan_measurements.h) the
// winner is the plan measured fastest per iteration, kept (verified "measured") when it beats the
// measured DDP default by the margin; the result file gives each plan's prediction beside its
// measurement and the model's error. With `print_plans` nothing is written: the report's `result`
// holds the repo_key and every plan with its prediction, for the running job to measure.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/gdat/fusion_plan.h"
#include "base/status.h"

namespace tilebank {
class Bank;
class WriteTxn;
}

namespace tilebank::engine {

struct GdatReport;

struct GdatOptions {
  std::string profile_path;
  nlohmann::json profile;  // not null: the profile itself (a batch plan's), profile_path only names it
  std::string tuning_name;  // empty: the profile's model, else the file's name
  std::string bank_root, soc_version, fingerprint, output_dir;
  Bank* bank = nullptr;  // open already (a batch worker's, of soc_version); else opened under bank_root
  size_t max_segments = 8;  // AOE/HCCL allow 8
  double min_gain = 0.02;
  bool repeat_tune = false;
  std::string measured_path;  // plans measured live: keep the measured winner
  bool print_plans = false;   // plan only: no bank entry, no result file
  bool write_result_file = true;  // false: the report's `result` only (a batch shard writes one file for all)
  // Called inside the transaction that stores the winner, the report's status and times set: a
  // batch worker's checkpoint commits with the entry. Not called when no entry is written.
  std::function<Status(WriteTxn&, const GdatReport&)> commit_with_entry;
};

struct GdatReport {
  std::string tuning_name, result_path, repo_key, status;  // add | update | hit | unsatisfied | reserved
  // DDP's default plan and the plan kept: the median iteration when measured, else the predicted
  // backward start to the last AllReduce done
  double before_ms = 0, after_ms = 0;
  bool measured = false;
  nlohmann::json result;
};

Result<GdatReport> RunGdatJob(const GdatOptions& options);

}  // namespace tilebank::engine
