// `tilebank batch status PLAN.json BANK_ROOT`: per shard, whether it waits, runs, stopped (its
// worker is gone without finishing: requeue it), is done or failed, and how many of its tasks are
// done, failed and left; read from each shard's state file and bank checkpoint, beside running workers.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/batch/batch_plan.h"
#include "base/status.h"

namespace tilebank::engine {

struct ShardStatus {
  size_t shard = 0;
  std::string soc_version;  // of the shard's group
  std::string state;  // waiting | running | stopped | done | failed
  size_t tasks = 0, done = 0, failed = 0;
  double estimated_s = 0;
  std::string worker;   // host:pid of the last worker
  std::string run_id;   // the launcher's job it ran in (ShardState::run_id)
  std::string message;  // a failed worker's error
  size_t Left() const { return tasks - done; }
};

// A bank root that does not exist yet is a batch no worker has started: every shard waits.
Result<std::vector<ShardStatus>> ReadBatchStatus(const BatchPlan& plan, const std::string& bank_root);

// {"plan_id", "soc_versions", "job_type", "shards": [...], "total": {...}, "by_soc_version": {SOC: {...}}}:
// the totals over every shard given, and over each soc_version's.
nlohmann::json BatchStatusJson(const BatchPlan& plan, const std::vector<ShardStatus>& shards);

}  // namespace tilebank::engine
