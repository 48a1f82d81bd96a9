// GDAT offline (`tune -j 4 --gradients PROFILE.json`, job type 4): plans the gradient fusion of a
// profile recorded elsewhere (engine/gdat/gradient_profile.h), as AOE tunes GDAT from collected
// data. The AllReduce cost model is fitted to the profile's sweep, the DP planner gives the best
// split per segment count (engine/gdat/fusion_plan.h), and the best, if it beats PyTorch DDP's
// default plan under the model by the job's margin, goes into the bank as a grad entry (template
// gdat.split, verified "model"). The anchors' predictions are in the result file,
// aoe_result_gdat_{timestamp}_{pid}.json. A bank entry verified "measured" (in a running job) is
// not replaced by a prediction.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/gdat/fusion_plan.h"
#include "repo/status.h"

namespace tilebank::engine {

struct GdatOptions {
  std::string profile_path;
  std::string tuning_name;  // empty: the profile's model, else the file's name
  std::string bank_root, soc_version, fingerprint, output_dir;
  size_t max_segments = 8;  // AOE/HCCL allow 8
  double min_gain = 0.02;
  bool repeat_tune = false;
};

struct GdatReport {
  std::string tuning_name, result_path, repo_key, status;  // add | update | hit | unsatisfied | reserved
  double before_ms = 0, after_ms = 0;  // backward start to the last AllReduce done: DDP's default, the plan kept
  nlohmann::json result;
};

Result<GdatReport> RunGdatJob(const GdatOptions& options);

}  // namespace tilebank::engine
