// A job type's part in a batch, behind one interface: the tasks it plans from a model, a shard's
// input file, running a shard, reading a shard's progress from its bank, and the result file of a
// shard or a merged group. engine/batch/ asks BatchJobOf(plan.job_type) and switches on nothing;
// one implementation per job type: opat_batch_job.cpp, sgat_batch_job.cpp, gdat_batch_job.cpp.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/batch/batch_plan.h"
#include "engine/batch/shard_dir.h"
#include "engine/batch/shard_worker.h"
#include "engine/ir/graph.h"
#include "engine/jobs/task_done.h"
#include "base/status.h"

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

// Where a shard's job runs and what it is told.
struct ShardJobContext {
  std::string job_name;     // batch_<plan id>_shard_<i>: the job's and its result file's name
  std::string input_path;   // the shard's input file (ShardInputPath)
  std::string output_dir;   // the shard's directory
  std::string bank_dir;     // the bank root it tunes into (the shard's directory or node-local storage)
  std::string soc_version, fingerprint;
  bool resume = false;      // go on from the shard's checkpoint
  int trials = 0;
  uint64_t seed = 0;
  JobListeners listeners;
  TaskDoneHook on_task_done;
};

struct ShardJobResult {
  std::string result_path;
  bool any_failed = false;
};

class BatchJob {
 public:
  virtual ~BatchJob() = default;
  // The tasks a model gives this job type (`model_name` names it in the plan); kInvalidInput when
  // the job type takes no models.
  virtual Result<std::vector<BatchTask>> ModelTasks(const model::Graph& graph, const std::string& model_name, int trials) const = 0;
  // The inputs a plan of this job type may take (models, operator lists, gradient profiles).
  virtual Status CheckInputs(const BatchInputs& in) const = 0;
  // The shard's input file: its tasks' payloads as the job reads them.
  virtual nlohmann::json ShardInput(const BatchPlan& plan, size_t shard) const;
  // Runs the shard's tasks (resumed from its checkpoint when `context.resume`).
  virtual Result<ShardJobResult> RunShard(const BatchPlan& plan, size_t shard, const ShardJobContext& context) const = 0;
  // The latest job of this type in a shard's bank: started, finished, its records.
  virtual Result<ShardProgress> ReadProgress(const Bank& bank) const = 0;
  // AOE's result file for `records` (a shard's, or a merged group's); `finished`: every task done.
  virtual nlohmann::json ResultJson(const std::string& name, double elapsed_s, const ShardProgress& records, bool finished) const = 0;
};

// The batch part of job type `job_type`, which was checked to be one of JobTypes().
const BatchJob& BatchJobOf(int job_type);

}  // namespace tilebank::engine
