#include "engine/jobs/gdat_list_result.h"

#include <cmath>

#include "engine/jobs/result_file.h"
#include "repo/improvement.h"

namespace tilebank::engine {

nlohmann::json GradientTaskRecord::ToJson() const {
  return {{"key", key}, {"name", name}, {"status", status}, {"before_ms", before_ms}, {"after_ms", after_ms}, {"failure", failure}, {"tune_s", tune_s}};
}

GradientTaskRecord GradientTaskRecord::FromJson(const nlohmann::json& j) {
  GradientTaskRecord r;
  r.key = j.at("key").get<std::string>();
  r.name = j.at("name").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.before_ms = j.at("before_ms").get<double>();
  r.after_ms = j.at("after_ms").get<double>();
  r.failure = j.at("failure").get<std::string>();
  r.tune_s = j.at("tune_s").get<double>();
  return r;
}

nlohmann::json GdatListResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<GradientTaskRecord>& records,
                                  bool finished) {
  nlohmann::json basic = {{"tuning_name", tuning_name}};
  if (finished) basic["tuning_time(s)"] = static_cast<int64_t>(std::llround(tuning_seconds));
  nlohmann::json result = nlohmann::json::array({{{"basic", basic}}});
  if (records.empty()) return result;  // no problem planned: no GDAT section
  RepoSummary summary;
  nlohmann::json rows = nlohmann::json::array(), failed = nlohmann::json::array();
  for (const auto& r : records) {
    summary.Count(r.status);
    if (r.status == "failed") {
      failed.push_back({{"tuning_name", r.name}, {"repo_key", r.key}, {"failure", r.failure}});
      continue;
    }
    rows.push_back({{"tuning_name", r.name},
                    {"repo_key", r.key},
                    {"status", r.status},
                    {"performance_before_tune(ms)", r.before_ms},
                    {"performance_after_tune(ms)", r.after_ms},
                    {"performance_improvement", ImprovementText(r.before_ms, r.after_ms)}});
  }
  nlohmann::json gdat = {{"performance", "backward start to the last AllReduce done, predicted"},
                         {"gradient_problems", rows},
                         {"repo_summary", summary.Json()}};
  if (!finished) gdat["gdat_tuning_result"] = "tune tuning incomplete";
  else gdat["gdat_tuning_result"] = failed.empty() ? "tuning successful" : "tuning failed";
  if (!failed.empty()) gdat["tuning_failed_problems"] = failed;
  result.push_back({{"GDAT", gdat}});
  return result;
}

}  // namespace tilebank::engine
