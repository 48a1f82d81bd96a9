// What an SGAT job (engine/jobs/model_sgat_job.h) keeps in the bank's jobs database so that a
// killed run goes on with `tune -j 1 --reload [JOB]`: its inputs, the order of its subgraphs, the
// records of those done, and the entries it replaced (to take them back if the model gets slower).
// Written in the same transaction as each subgraph's entry: a kill never separates them.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/jobs/job_types.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/replaced_entries.h"
#include "repo/entry.h"

namespace tilebank::engine {

// The jobs database key naming the latest SGAT job (engine/jobs/job_types.h).
inline const char* const kLatestSgatJob = JobTypeOf(1).latest_key;

struct SgatCheckpoint {
  std::string job_name, tuning_name, model_path, subgraphs_path, result_path;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  double baseline_ms = 0;                // a model: the whole model before the job
  std::vector<std::string> keys;         // the subgraphs' repo_keys in the order they are tuned
  std::vector<SubgraphRecord> records;   // the first records.size() of them, done
  ReplacedEntries replaced;              // repo_key -> the entry this job replaced (nullopt: none)
  bool finished = false;
  double elapsed_s = 0;                  // seconds tuned so far, over every run of the job

  std::string ToJson() const;
  static Result<SgatCheckpoint> FromJson(const std::string& text, const std::string& job_name);
};

}  // namespace tilebank::engine
