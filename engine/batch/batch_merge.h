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
#include "base/status.h"

namespace tilebank::engine {

// One soc_version's group of shards merged into BANK_ROOT/<soc_version>/.
struct BatchMergeReport {
  std::string soc_version;
  size_t shards_merged = 0;            // shards with a bank
  std::vector<size_t> shards_unfinished;  // shards whose job has not finished (merged as far as they got)
  size_t tasks = 0, tasks_done = 0, tasks_failed = 0;
  WriteCounts counts;
  std::string bank_dir, result_path;
};

// Merges the groups of `soc_versions` (empty: every group of the plan), each into its own bank;
// every shard of them is read before any bank is written. Each group's result file goes to
// `output_dir` (empty: BANK_ROOT) as aoe_result_{opat|sgat}_batch_<plan_id>.json, with
// _<soc_version> before .json in a plan of several soc_versions: AOE's fields over every task done
// in the group's shards; "tune tuning incomplete" while one of them is unfinished.
Result<std::vector<BatchMergeReport>> MergeBatch(const BatchPlan& plan, const std::string& bank_root, const std::string& fingerprint,
                                                 const std::string& output_dir, const std::vector<std::string>& soc_versions = {});

}  // namespace tilebank::engine
