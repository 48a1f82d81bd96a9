// The AOE operator tuning result file, aoe_result_opat_{timestamp}_{pid}.json (seeds/004):
// [{"basic": {...}}, {"OPAT": {...}}], rewritten atomically after every operator so that a killed
// run leaves a readable file. Times: operators in us, the op list ("model") in ms; improvement is
// (before - after) / after, as AOE computes it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "repo/improvement.h"
#include "base/status.h"

namespace tilebank::engine {

// What became of one operator of the list.
struct OpRecord {
  size_t index = 0;
  std::string op_name, op_type, key;
  std::string status;  // add | hit | reserved | unsatisfied | update | failed
  std::string mode;    // Schedule | Format | Impl (add/update)
  double before_us = 0, after_us = 0;  // performance before and after tuning
  std::string failure;
  double tune_s = 0;  // seconds this run spent tuning it (0 for a hit); checkpoints only
  // Whether the bank now holds this run's winner for it.
  bool Stored() const { return status == "add" || status == "update"; }
  // The op's time once the run is over: the winner's when stored, else the time before.
  double ResultUs() const { return Stored() ? after_us : before_us; }
  nlohmann::json ToJson() const;
  static OpRecord FromJson(const nlohmann::json& j);
};

// AOE's repo_summary: how many records were added, hit, reserved, unsatisfied and updated, of all.
struct RepoSummary {
  size_t add = 0, hit = 0, reserved = 0, unsatisfied = 0, update = 0, total = 0;
  void Count(const std::string& status);
  nlohmann::json Json() const;
};

// The op list's time before and after the run: the sums of its operators' times.
struct ListTimes {
  double before_us = 0, after_us = 0;
};
ListTimes SumTimes(const std::vector<OpRecord>& records);

// `v` rounded to a multiple of 1/per_unit, as the result file writes its times (dividing gives the
// nearest double, which prints short).
double RoundForResult(double v, double per_unit);


// finished: false while tuning (opat_tuning_result "tune tuning incomplete", no final figures).
// model_baseline_ms: a whole-model run before tuning (tune --model); absent, the operators' sum.
nlohmann::json OpatResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<OpRecord>& records,
                              bool finished, std::optional<double> model_baseline_ms = std::nullopt);

// Writes to a temporary file beside `path` (pretty-printed with `indent` spaces) and renames it
// over `path`: a reader sees the old file or the whole new one.
Status WriteJsonAtomically(const std::string& path, const nlohmann::json& content, int indent = 4);

}  // namespace tilebank::engine
