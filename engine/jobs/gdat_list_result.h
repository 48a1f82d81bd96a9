// The result file of a list of gradient fusion problems (a GDAT batch shard, or a whole batch's
// merge): [{"basic": {...}}, {"GDAT": {...}}] in the shape of the OPAT file (result_file.h), with
// one row a problem and repo_summary over all of them. Times are the GDAT job's (gdat_job.h):
// backward start to the last AllReduce done, predicted by the profile's cost model, in ms.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilebank::engine {

// What became of one gradient problem.
struct GradientTaskRecord {
  std::string key, name;  // the grad key, the profile's model
  std::string status;     // add | hit | reserved | unsatisfied | update | failed
  double before_ms = 0, after_ms = 0;  // DDP's default plan, the plan kept
  std::string failure;
  double tune_s = 0;  // seconds planning it took
  nlohmann::json ToJson() const;
  static GradientTaskRecord FromJson(const nlohmann::json& j);  // throws nlohmann::json::exception on a missing field
};

// finished: false while planning (gdat_tuning_result "tune tuning incomplete", no tuning time).
nlohmann::json GdatListResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<GradientTaskRecord>& records,
                                  bool finished);

}  // namespace tilebank::engine
