// OPAT on a model (`tune -j 2 --model`): the model's distinct tunable operator instances (one per
// bank key, named after their first node) are tuned as an OPAT job, most expensive first (default
// time x occurrences, measured in the model). At the end the whole model runs without and with
// the job's entries, interleaved in one process (engine/jobs/model_verdict.h): the result file's
// model_baseline_performance(ms) and model_result_performance(ms) are those runs' medians, and when
// the model is not faster with the entries by more than the runs' spread they are taken back.
// The model is imported once and bound to the bank before and after.
#pragma once
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/jobs/model_verdict.h"
#include "engine/jobs/opat_job.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/model_session.h"

namespace tilebank::engine {

struct ModelOpatOptions {
  std::string model_path;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::vector<std::vector<int64_t>> shapes_by_position;  // dims input_shapes leaves dynamic (model::ImportModel)
  OpatJobOptions job;  // ops_path is set here: the model's operator list, written to the output directory
  int warmup = 2, repeats = 10;  // whole-model timing
  double min_timing_s = 0.5;     // and more runs, up to ten times as many, until it took this long (model::TimeInterleaved)
  TimeModels time_models;        // the final comparison (engine/jobs/model_verdict.h)
  // The candidates of each operator the model runs alone measured where it runs them
  // (engine/jobs/in_context_measure.h), and before the final comparison each entry judged there
  // (engine/jobs/entries_in_context.h): those not faster go back. Tests of the final comparison
  // alone turn it off.
  bool in_context = true;
};

struct ModelOpatReport {
  OpatJobReport job;
  double baseline_ms = 0, result_ms = 0;  // the interleaved runs' medians without and with the job's entries
                                          // (result: without, when they were taken back)
  bool reverted = false;  // the model was slower with this run's entries: they were taken back
  std::string note;       // what the final comparison measured and what it decided
  // Each entry judged in context (engine/jobs/entries_in_context.h): key, node, the medians of its
  // steps without and with it, the spread, and whether it stayed; in the result file as "in_context".
  nlohmann::json in_context = nlohmann::json::array();
  // op key -> this job's own entry a bf16 twin replaced: where the twin is not faster in context,
  // the search's winner comes back instead of what the key held before the job.
  std::map<std::string, Entry> under_twins;
  std::set<std::string> bf16_twins;  // op keys of the bf16 twins the job stored: judged along their chains too
};

// "resnet50" for .../resnet50/model.onnx (exported models are <name>/model.onnx), else the file's stem.
std::string ModelName(const std::string& path);

// The model's tunable operators as an ATC single-op list, one per bank key, named after the first
// node, ordered by the model time they account for (`node_us`: each binding's time, or empty);
// `weights`, when given, receives that time per listed op (the time budget is shared by it).
nlohmann::json ModelOpList(const model::Executor& executor, const std::vector<double>& node_us, std::vector<double>* weights = nullptr);

Result<ModelOpatReport> RunModelOpatJob(const ModelOpatOptions& options);

// Online tuning (`run --tune online`, seeds 000 and 003): tunes the operators of the model that the
// bank lacks, except those an earlier online run already tried without beating the default with
// the same template version (recorded in the bank's jobs database as "online-tried/<key>"), so the
// run after a finished one tunes nothing. The model is imported once and bound twice at most:
// with the bank as it was (the check, the baseline, the operator list) and, when something was
// tuned, with the tuned bank; `executor` is the model to run, bound to the bank as it now is.
struct OnlineTuning {
  std::optional<ModelOpatReport> report;  // nullopt: nothing to tune
  std::unique_ptr<model::Executor> executor;
  double load_s = 0;  // seconds `executor` took to import and bind (after tuning: to bind)
};
Result<OnlineTuning> TuneOnline(const ModelOpatOptions& options);

}  // namespace tilebank::engine
