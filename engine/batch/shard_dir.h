// A shard's directory, BANK_ROOT/shards/<i>/: the worker's own bank (<soc_version>/), its input
// (ops.json for operators, subgraphs.json for subgraphs, gradients.json for gradient profiles), its result file, and state.json, which
// says who works on it and how that ended. What a shard has tuned is read from its bank's job
// checkpoint, committed with each task, so a reader beside a running worker sees every finished task.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/batch/batch_plan.h"
#include "engine/jobs/gdat_list_result.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/result_file.h"
#include "base/status.h"

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

std::string ShardDir(const std::string& bank_root, size_t shard);
// The shard's input file: ops.json (job type 2), subgraphs.json (job type 1) or gradients.json (job type 4).
std::string ShardInputPath(const BatchPlan& plan, const std::string& bank_root, size_t shard);
// The input file's content: the shard's tasks in its order (costliest first).
nlohmann::json ShardInputJson(const BatchPlan& plan, size_t shard);

// state.json: {"plan_id", "state": "running"|"done"|"failed", "host", "pid", "run_id", "started", "updated", "message"}
struct ShardState {
  std::string plan_id, state, host, message;
  std::string run_id;  // the launcher's job (CurrentRunId) the worker ran in; "" outside one
  long pid = 0;
  double started = 0, updated = 0;  // seconds since the epoch
  // Tasks done and failed as the worker last wrote them (after each task); -1: not recorded (a
  // state file written before the counts were). Readers use them instead of opening a bank that
  // a worker on another host writes (LMDB's locks do not reach across a shared file system).
  long tasks_done = -1, tasks_failed = 0;
};
Status WriteShardState(const std::string& dir, const ShardState& state);
// nullopt when the shard has no state file (no worker has started it).
Result<std::optional<ShardState>> ReadShardState(const std::string& dir);
// The Slurm job or MPI job this process runs in (SLURM_JOB_ID, Open MPI's or PMIx's job id); ""
// when there is none. Rank 0 under MPI waits for the shards' states of its own run, not of an earlier one.
std::string CurrentRunId();
// This process on this host, "running", started now.
ShardState RunningState(const std::string& plan_id);

// What the shard's latest job has done, from its bank (empty when it has none).
struct ShardProgress {
  bool started = false, finished = false;
  double elapsed_s = 0;
  std::string tuning_name, result_path;
  std::vector<OpRecord> operators;         // job type 2
  std::vector<SubgraphRecord> subgraphs;   // job type 1
  std::vector<GradientTaskRecord> gradients;  // job type 4
  size_t Done() const { return operators.size() + subgraphs.size() + gradients.size(); }
  size_t Failed() const;
};
// `bank` is the shard's bank opened read-only (null: the shard has none). A process opens a bank
// once: LMDB forbids two environments of one bank in a process.
Result<ShardProgress> ReadShardProgress(const BatchPlan& plan, const Bank* bank);
// The shard's bank opened read-only; null when it has none, or when its creation was interrupted
// (a worker killed while creating it: the next worker creates it again).
Result<std::unique_ptr<Bank>> OpenShardBankReadOnly(const BatchPlan& plan, const std::string& bank_root, size_t shard);

// Whether the worker a state names is gone: it ran on this host and its pid no longer runs.
bool WorkerGone(const ShardState& state);

}  // namespace tilebank::engine
