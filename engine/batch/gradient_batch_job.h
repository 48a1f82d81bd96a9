// A batch shard of gradient fusion problems (job type 4): each task's profile, carried in the plan,
// planned by the GDAT job (engine/jobs/gdat_job.h) into the shard's bank. The shard's checkpoint
// (the records of the tasks done) lives in the bank's jobs database and commits in the same
// transaction as a task's entry, so a worker killed and started again goes on after the last task
// done and never plans one twice. Planning measures nothing: a shard may run on any machine.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/batch/batch_plan.h"
#include "engine/jobs/gdat_list_result.h"
#include "engine/jobs/job_events.h"
#include "engine/jobs/task_done.h"
#include "base/status.h"

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

struct GradientShardCheckpoint {
  std::string job_name, result_path;
  std::vector<std::string> keys;            // the shard's tasks in the order they are planned
  std::vector<GradientTaskRecord> records;  // the first records.size() of them, done
  bool finished = false;
  double elapsed_s = 0;                     // over every run of the job
  std::string ToJson() const;
  static Result<GradientShardCheckpoint> FromJson(const std::string& text, const std::string& job_name);
};

// The latest gradient shard checkpoint in `bank`; nullopt when there is none.
Result<std::optional<GradientShardCheckpoint>> LatestGradientShard(const Bank& bank);

struct GradientShardOptions {
  std::string job_name;  // also the result file's tuning_name
  std::string bank_root, soc_version, fingerprint, output_dir;
  bool resume = false;   // go on from the bank's checkpoint of job_name
  JobListeners listeners;     // the shard's events (engine/jobs/job_events.h); `stop` ends it after a problem
  TaskDoneHook on_task_done;  // after each problem's checkpoint commits
};

struct GradientShardReport {
  std::string result_path;  // output_dir/aoe_result_gdat_<job_name>.json, rewritten after each task
  bool any_failed = false;
  bool stopped = false;     // a listener stopped it before its last problem
};

// Plans `tasks` (a shard's gradient tasks, in its order). A task whose profile cannot be planned
// is recorded failed and the rest go on; kRefused when `resume` finds a checkpoint of other tasks.
Result<GradientShardReport> RunGradientShard(const std::vector<const BatchTask*>& tasks, const GradientShardOptions& options);

}  // namespace tilebank::engine
