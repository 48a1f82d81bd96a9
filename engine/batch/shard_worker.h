// A batch worker: tunes one shard of a plan into the shard's own bank (engine/batch/shard_dir.h).
// A worker started again on a shard (a Slurm requeue, a node lost, a second run by hand) goes on
// from the shard's checkpoint: the tasks done are not tuned again, and a finished shard is left
// as it is.
#pragma once

#include <string>

#include "engine/batch/batch_plan.h"
#include "engine/jobs/job_events.h"
#include "base/status.h"

namespace tilebank::engine {

struct ShardWorkOptions {
  std::string bank_root;
  // Not empty: the shard's bank is tuned here, in node-local storage, and published to the shard's
  // directory under bank_root after each task (engine/batch/shard_publish.h).
  std::string local_dir;
  std::string fingerprint;
  JobListeners listeners;  // each shard job's events (engine/jobs/job_events.h)
};

struct ShardWorkReport {
  size_t shard = 0, tasks = 0;
  bool resumed = false;       // went on from a checkpoint
  bool already_done = false;  // the shard had finished: nothing was tuned
  bool any_failed = false;    // some task failed to tune (the result file names it)
  std::string result_path;
  std::string warning;        // something went wrong that did not stop the shard
};

// kRefused when the shard tunes operators or subgraphs of another soc_version than this machine's
// (gradient problems are planned, not measured: any machine plans them), or the shard directory
// holds another plan's work. The shard's state.json says "failed" with the message on an error.
Result<ShardWorkReport> RunShard(const BatchPlan& plan, size_t shard, const ShardWorkOptions& options);

}  // namespace tilebank::engine
