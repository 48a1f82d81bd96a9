// The end of a batch (`tilebank batch merge PLAN.json BANK_ROOT`, or rank 0 under mpirun): every
// shard's bank merged into BANK_ROOT/<soc_version>/ with the bank's merge rules (repo/merge.h),
// and one result file for the whole batch. Shards hold distinct tasks, so merging them in any
// order, or twice, gives the same bank. A shard bank of another soc_version or a format this
// tilebank does not read refuses the whole merge by its name: nothing is merged.
#pragma once

#include <string>
#include <vector>

#include "engine/batch/batch_plan.h"
#include "repo/bank.h"
#include "repo/status.h"

namespace tilebank::engine {

struct BatchMergeReport {
  size_t shards_merged = 0;            // shards with a bank
  std::vector<size_t> shards_unfinished;  // shards whose job has not finished (merged as far as they got)
  size_t tasks = 0, tasks_done = 0, tasks_failed = 0;
  WriteCounts counts;
  std::string bank_dir, result_path;
};

// The result file goes to `output_dir` (empty: BANK_ROOT) as aoe_result_{opat|sgat}_batch_<plan_id>.json:
// AOE's fields over every task done in every shard; "tune tuning incomplete" while a shard is unfinished.
Result<BatchMergeReport> MergeBatch(const BatchPlan& plan, const std::string& bank_root, const std::string& fingerprint,
                                    const std::string& output_dir);

}  // namespace tilebank::engine
