// A batch plan (issue 23): the tasks of a tuning batch and how they are split into shards, the
// same for the same inputs on every machine, so that a worker given `--shard I/N` needs no
// coordinator. A task is what a job tunes one at a time: an operator (bank key, job type 2), a
// subgraph (repo_key, job type 1) or a gradient problem (its grad key, job type 4, planned from a
// gradient profile); tasks are distinct over every model (or profile) of the batch. Shards are
// balanced by each task's estimated cost (longest first onto the least loaded shard), not by count.
// A plan for several soc_versions has one group of shards per soc_version, each tuning every task
// on nodes of its soc_version: shards 0 to N-1 are the first soc_version's, N to 2N-1 the next's.
//
// PLAN.json (docs/BATCH.md):
//   {"format": "tilebank.batch_plan", "version": 2, "job_type": 2|1|4, "soc_versions": [SOC, ...],
//    "trials": 48, "seed": 1, "shards": N x soc_versions, "shards_per_soc_version": N, "inputs": [paths], "plan_id": HEX,
//    "tasks": [{"kind": "operator"|"subgraph"|"gradient", "key": K, "name": N, "op_type": T, "cost_s": C,
//               "models": [names], "description": ATC single op | "subgraph": subgraph file entry
//               | "profile": the gradient profile}],
//    "shard_tasks": [[task indices of a group's shard 0], ...], "shard_cost_s": [...]}
// A plan of one soc_version and job type 1 or 2 is written as version 1, as before: "soc_version": SOC
// instead of the list and N, so a tilebank that reads only version 1 still reads it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_types.h"
#include "base/status.h"

namespace tilebank::engine {

inline constexpr const char* kBatchPlanFormat = "tilebank.batch_plan";
inline constexpr int kBatchPlanVersion = 2;

// One model of a batch: a path and the shapes of its dynamic inputs.
struct BatchModel {
  std::string path;
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// What a plan is made from: `tune`'s inputs.
struct BatchInputs {
  int job_type = 2;                 // 1 (SGAT), 2 (OPAT) or 4 (GDAT)
  std::vector<BatchModel> models;   // -m or --model-list (job types 1 and 2), or
  std::string singleop;             // --singleop (job type 2 only), or
  std::vector<std::string> gradient_profiles;  // --gradients or --gradients-list (job type 4 only)
  std::vector<std::string> soc_versions;  // one group of shards each, in this order

  int trials = 48;
  uint64_t seed = 1;
  size_t shards = 1;  // per soc_version
  // Tuning seconds measured in earlier batches, by task key (ReadTaskSeconds): those tasks cost
  // what they took, the others their estimate scaled as the measured ones were off (Calibrate).
  std::map<std::string, double> measured_seconds;
};

// How a plan's costs were calibrated from measured tasks.
struct Calibration {
  size_t measured_tasks = 0;  // tasks of the plan with a measured time: that time is their cost
  double scale = 1;           // the other tasks' estimates times this: the median of measured / estimated
  bool Applied() const { return measured_tasks > 0; }
};

struct BatchTask {
  std::string kind;  // "operator" | "subgraph" | "gradient"
  std::string key, name, op_type;
  double cost_s = 0;  // estimated tuning seconds (EstimateTaskSeconds)
  std::vector<std::string> models;
  nlohmann::json payload;  // the ATC op description, the subgraph file's entry, or the gradient profile
};

struct BatchPlan {
  int job_type = 2;
  std::vector<std::string> soc_versions;  // one group of shards each, in this order (distinct)
  int trials = 48;
  uint64_t seed = 1;
  std::vector<std::string> inputs;
  std::vector<BatchTask> tasks;                  // sorted by key
  std::vector<std::vector<size_t>> shard_tasks;  // a group's shards, costliest task first (every group splits alike)
  std::string plan_id;                           // a hash of the tasks and the settings
  Calibration calibration;                       // PLAN.json "calibration" when applied

  size_t GroupShards() const { return shard_tasks.size(); }
  size_t shards() const { return soc_versions.size() * shard_tasks.size(); }
  // Shard `shard` of the whole plan (0 <= shard < shards()): its tasks and its soc_version.
  const std::vector<size_t>& TasksOf(size_t shard) const { return shard_tasks.at(shard % shard_tasks.size()); }
  const std::string& SocOf(size_t shard) const { return soc_versions.at(shard / shard_tasks.size()); }
  // The shards of `soc` in order; empty when the plan does not tune it.
  std::vector<size_t> ShardsOf(const std::string& soc) const;
  double ShardCost(size_t shard) const;
  nlohmann::json ToJson() const;
};

// Reads MODELS.txt: one model per line, `path [input shapes as --input-shape takes them]`;
// blank lines and lines starting with # are skipped; relative paths are relative to the list.
Result<std::vector<BatchModel>> ReadModelList(const std::string& path);
// Reads a gradient profile list: one profile path a line, with the same rules.
Result<std::vector<std::string>> ReadGradientList(const std::string& path);

// The plan of `inputs` (the models are imported and bound with built-in policies, so the bank
// does not change the tasks). kInvalidInput naming the input that cannot be read.
Result<BatchPlan> MakeBatchPlan(const BatchInputs& inputs);

// kInvalidInput naming the file and the field, kRefused for a newer format version.
Result<BatchPlan> ReadBatchPlan(const std::string& path);

// `basic.batch.task_seconds` of batch result files (what `batch merge` writes), by key; a key in
// several files takes the last one's time. kInvalidInput naming a file that is not such a result.
Result<std::map<std::string, double>> ReadTaskSeconds(const std::vector<std::string>& result_files);

// Sets each task's cost to its measured seconds where `measured` has them, and scales the other
// tasks' estimates by the median ratio of measured to estimated seconds over the measured ones.
Calibration Calibrate(const std::map<std::string, double>& measured, std::vector<BatchTask>* tasks);

// Seconds tuning one task is expected to take: each of `trials` candidates costs a fixed overhead
// (build, check) and its timed runs at an assumed sustained rate.
double EstimateTaskSeconds(double flops, int trials);

// An operator task (job type 2) of the ATC-style description `description`, the `index`th of its list.
Result<BatchTask> OperatorTask(const nlohmann::json& description, size_t index, int trials);
// The inputs a batch of operators or subgraphs (job types 2 and 1) takes: models or an operator
// list, one of them, and no gradient profiles.
Status CheckTuningInputs(const BatchInputs& in);
// Seconds planning one gradient problem of `gradients` gradients is expected to take (no measuring).
double EstimateGradientTaskSeconds(size_t gradients);

// Task indices into `shards` groups: longest processing time first onto the least loaded group
// (ties: the lower index), costs as given. Deterministic.
std::vector<std::vector<size_t>> CostBalancedShards(const std::vector<double>& costs, size_t shards);
// The same number of tasks in each group, in order (what a plan balanced by count would do).
std::vector<std::vector<size_t>> CountBalancedShards(size_t tasks, size_t shards);

// "I/N" -> {I, N}; kInvalidInput unless 0 <= I < N. "mpi" is read by ShardFromEnvironment.
Result<std::pair<size_t, size_t>> ParseShard(const std::string& text);
// The rank and size an MPI launcher (Open MPI, PMIx, MPICH/PMI) or srun gives this process.
Result<std::pair<size_t, size_t>> ShardFromEnvironment();

}  // namespace tilebank::engine
