// SGAT on a model (`tune -j 1 --model`, job type 1): the model's subgraphs (engine/passes/partition.h)
// one task per repo_key, most expensive first (their time in the model x
// occurrences). Each task is tuned by engine/tuning/subgraph_tuner.h within --trials; a winner that
// beats its baseline by the job's margin becomes a graph entry (template sgat.fused,
// engine/backends/fused_policy.h). At the
// end the whole model runs with this run's entries and without them, interleaved in one process:
// when its output changes, or it is not faster with them by more than the runs' spread, the entries
// are taken back.
// The result file is aoe_result_sgat_{timestamp}_{pid}.json as seeds/004 describes, rewritten after
// every subgraph; the job is checkpointed in the bank with each subgraph (engine/jobs/sgat_checkpoint.h).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_events.h"
#include "engine/jobs/model_verdict.h"
#include "engine/jobs/task_done.h"
#include "engine/runtime/model_session.h"
#include "base/status.h"

namespace tilebank::engine {

struct ModelSgatOptions {
  std::string model_path;      // a model, or
  std::string subgraphs_path;  // a subgraph file (engine/passes/subgraph_file.h): its subgraphs' times
                               // x occurrences stand for the model's, as OPAT sums an op list
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::string tuning_name;   // empty: the model's name
  std::string bank_root, soc_version, fingerprint;
  std::string output_dir;
  bool repeat_tune = false;  // tune subgraphs the bank already holds
  std::optional<std::string> reload;  // go on with this job ("" = the latest SGAT job); its model or file and shapes are the job's
  double min_gain = 0.02;    // as OPAT's
  int trials = 48;           // at most this many candidates per subgraph
  double time_budget_s = 0;  // 0: none; else subgraphs left when it runs out are not tuned, and the one under way stops its candidates
  int warmup = 3, repeats = 20;               // whole-model timing (its noise decides whether entries are taken back)
  double min_timing_s = 0.5;                  // and more runs, up to ten times as many, until it took this long (model::TimeInterleaved)
  // How the model is timed without (a) and with (b) this run's entries at the end; empty:
  // model::TimeInterleaved with warmup and repeats. Tests replace it to see the take-back happen.
  TimeModels time_models;
  int subgraph_warmup = 3, subgraph_repeats = 20;
  JobListeners listeners;     // the job's events (engine/jobs/job_events.h); `stop` ends it after a subgraph
  TaskDoneHook on_task_done;  // after each subgraph's checkpoint commits
};

// What became of one subgraph.
struct SubgraphRecord {
  std::string repo_key;   // unsigned decimal
  std::string name;       // the first occurrence's anchor node
  std::string op_type;    // "Conv+Relu"
  int occurrences = 0;
  std::string status;     // add | update | hit | reserved | unsatisfied | failed | skipped
  int fuse = 0;           // the winner's (add/update) or the bank's (hit)
  std::string impl;       // with fuse: "onednn" or "halide"
  double before_ms = 0, after_ms = 0;
  std::string failure;
  bool Stored() const { return status == "add" || status == "update"; }
};

struct ModelSgatReport {
  std::string tuning_name, result_path;
  nlohmann::json result;
  std::vector<SubgraphRecord> records;
  bool whole_model = true;  // false: a subgraph file, whose times are sums over its subgraphs
  double baseline_ms = 0, result_ms = 0;
  bool stopped = false;   // a listener stopped it before its last subgraph: --reload goes on
  bool reverted = false;  // the model was slower (or computed otherwise) with this run's entries: they were taken back
  std::string note;       // whole model: what the final comparison measured and what it decided
  std::string improvement;  // whole model: the improvement reported (engine/jobs/model_verdict.h), "3.10%"
};

Result<ModelSgatReport> RunModelSgatJob(const ModelSgatOptions& options);

// A subgraph file's "model" time before and after: each subgraph's time (after: the winner's or the
// bank's on a hit, else before) times its occurrences, summed.
std::pair<double, double> SubgraphListTimes(const std::vector<SubgraphRecord>& records);

// The SGAT result file's content (seeds/004). finished: false while tuning (no model result yet).
// `improvement`: the model_performance_improvement reported; empty: computed from the two times.
nlohmann::json SgatResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<SubgraphRecord>& records,
                              double baseline_ms, std::optional<double> result_ms, const std::string& improvement = "");

}  // namespace tilebank::engine
