#include "engine/jobs/result_file.h"
#include "base/json_text.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace tilebank::engine {

nlohmann::json OpRecord::ToJson() const {
  return {{"index", index}, {"op_name", op_name}, {"op_type", op_type}, {"key", key}, {"status", status},
          {"mode", mode}, {"before_us", before_us}, {"after_us", after_us}, {"failure", failure}, {"tune_s", tune_s}};
}

OpRecord OpRecord::FromJson(const nlohmann::json& j) {
  OpRecord r;
  r.index = j.at("index").get<size_t>();
  r.op_name = j.at("op_name").get<std::string>();
  r.op_type = j.at("op_type").get<std::string>();
  r.key = j.at("key").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.mode = j.at("mode").get<std::string>();
  r.before_us = j.at("before_us").get<double>();
  r.after_us = j.at("after_us").get<double>();
  r.failure = j.at("failure").get<std::string>();
  r.tune_s = j.value("tune_s", 0.0);  // absent in checkpoints written before it was recorded
  return r;
}



ListTimes SumTimes(const std::vector<OpRecord>& records) {
  ListTimes t;
  for (const auto& r : records) t.before_us += r.before_us, t.after_us += r.ResultUs();
  return t;
}

double RoundForResult(double v, double per_unit) { return std::round(v * per_unit) / per_unit; }

void RepoSummary::Count(const std::string& status) {
  ++total;
  if (status == "add") ++add;
  else if (status == "hit") ++hit;
  else if (status == "reserved") ++reserved;
  else if (status == "unsatisfied") ++unsatisfied;
  else if (status == "update") ++update;
}

nlohmann::json RepoSummary::Json() const {
  return {{"repo_add_num", add}, {"repo_hit_num", hit}, {"repo_reserved_num", reserved},
          {"repo_unsatisfied_num", unsatisfied}, {"repo_update_num", update}, {"total_num", total}};
}

nlohmann::json OpatResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<OpRecord>& records,
                              bool finished, std::optional<double> model_baseline_ms) {
  nlohmann::json basic = {{"tuning_name", tuning_name}};
  if (finished) basic["tuning_time(s)"] = static_cast<int64_t>(std::llround(tuning_seconds));
  nlohmann::json result = nlohmann::json::array({{{"basic", basic}}});
  if (records.empty()) return result;  // no operator to tune: no OPAT section

  const ListTimes times = SumTimes(records);
  const double baseline_us = model_baseline_ms ? *model_baseline_ms * 1000.0 : times.before_us, result_us = times.after_us;
  RepoSummary summary;
  nlohmann::json modified = nlohmann::json::array(), failed = nlohmann::json::array();
  for (const auto& r : records) {
    summary.Count(r.status);
    if (r.status == "failed") failed.push_back(r.op_name);
    if (r.Stored()) {
      modified.push_back({{"op_name", r.op_name},
                          {"op_type", r.op_type},
                          {"tune_performance",
                           {{r.mode,
                             {{"performance_after_tune(us)", RoundForResult(r.after_us, 1e3)},
                              {"performance_before_tune(us)", RoundForResult(r.before_us, 1e3)},
                              {"performance_improvement", ImprovementText(r.before_us, r.after_us)},
                              {"update_mode", r.status}}}}}});
    }
  }
  nlohmann::json opat = {{"model_baseline_performance(ms)", RoundForResult(baseline_us / 1000.0, 1e6)},
                         {"repo_modified_operators", modified},
                         {"repo_summary", summary.Json()}};
  if (finished) {
    opat["model_performance_improvement"] = ImprovementText(baseline_us, result_us);
    opat["model_result_performance(ms)"] = RoundForResult(result_us / 1000.0, 1e6);
    opat["opat_tuning_result"] = failed.empty() ? "tuning successful" : "tuning failed";
    if (!failed.empty()) opat["tuning_failed_operators"] = failed;
  } else {
    opat["opat_tuning_result"] = "tune tuning incomplete";
  }
  result.push_back({{"OPAT", opat}});
  return result;
}

Status WriteJsonAtomically(const std::string& path, const nlohmann::json& content, int indent) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IoError("cannot write " + tmp + " (is the directory writable?)");
    out << DumpJson(content, indent) << '\n';
    out.flush();
    if (!out) return Status::IoError("writing " + tmp + " failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace tilebank::engine
