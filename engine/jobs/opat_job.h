// An OPAT job (job type 2): tune every operator of a single-op list, write winners into the bank of
// this machine's soc_version, keep the AOE result file up to date as each operator finishes, and
// checkpoint into the bank's jobs database so a killed run resumes with --reload.
#pragma once
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_events.h"
#include "engine/jobs/replaced_entries.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/task_done.h"
#include "engine/jobs/in_context_measure.h"
#include "engine/tuning/tuner.h"
#include "base/status.h"

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

struct OpatJobOptions {
  std::string ops_path;           // --singleop
  std::string tuning_name;        // names the run in the closing line; empty: the list file's stem
  std::string bank_root;          // resolved bank root
  std::string soc_version;        // the bank's soc_version (the host's unless overridden)
  std::string fingerprint;
  std::string output_dir;         // where the result file goes
  std::vector<std::string> tune_op_names, tune_op_types;  // --tune-ops-file filter (empty: all)
  bool repeat_tune = false;
  std::optional<std::string> reload;  // resume this job ("" = the latest unfinished one)
  double time_budget_s = 0;           // 0: none
  std::vector<double> budget_weights; // per op of the list: its share of the time budget (empty: equal)
  std::optional<double> model_baseline_ms;  // tune --model: the whole model before tuning (kept for --reload)
  double min_gain = 0.02;             // a winner must beat the baseline by this fraction to be stored
  // Store the built-in choice as the entry of every operator whose built-in choice won (status
  // "unsatisfied"), with its checkpoint, not only at the end for those with a neighbour in the bank:
  // a batch shard does, so that the merged bank has every task's entry whatever shard tuned its
  // neighbours, and a resumed shard keeps those it stored before it was killed.
  bool keep_builtin_wins = false;
  TuneOptions tune;
  // Set (tune --model): the measurement of an operator's candidates where the model runs it, or
  // empty for an operator measured alone (engine/jobs/in_context_measure.h).
  std::function<MeasureInContext(const OpSpec& op)> in_context;
  JobListeners listeners;     // the job's events (engine/jobs/job_events.h); `stop` ends it after a task
  TaskDoneHook on_task_done;  // after each operator's checkpoint commits
};

struct OpatJobReport {
  std::string job_name;
  std::string tuning_name;
  std::string result_path;
  nlohmann::json result;  // the result file's content
  double improvement_percent = 0;
  bool any_failed = false;
  bool stopped = false;      // a listener stopped it before its last operator: --reload goes on
  ReplacedEntries replaced;  // the entries the job stored: op key -> the entry before it (nullopt: none)
};

// Reads the --tune-ops-file filter: {"tune_ops_name": [...], "tune_ops_type": [...]}.
Status ReadTuneOpsFile(const std::string& path, std::vector<std::string>* names, std::vector<std::string>* types);

Result<OpatJobReport> RunOpatJob(const OpatJobOptions& options);

// Takes back the entries job `job_name` stored in `bank` (the earlier ones put back, added ones
// removed) and records that in its checkpoint, in one transaction: its stored records become
// what they would have been had nothing beaten the bank (add -> unsatisfied, update -> reserved).
// Rewrites the job's result file and returns its content. `only`, when given, names the op keys
// (FormatKey) to take back; the job's other entries stay.
Result<nlohmann::json> TakeBackOpatJob(Bank& bank, const std::string& job_name, const std::set<std::string>* only = nullptr);

// Stores `entries` in `bank` as job `job`'s own, each over whatever the bank holds at its key, in
// one transaction: the checkpoint records what each replaced (for a key the job had stored already,
// what the key held before the job), so TakeBackOpatJob takes them back with the rest; the first
// record of each key becomes add or update with the entry's times. Rewrites the job's result file;
// `job`'s replaced entries and result follow.
Status AddToOpatJob(Bank& bank, OpatJobReport* job, const std::vector<Entry>& entries);

// The latest OPAT job checkpointed in a bank, as a reader beside it sees it (engine/batch reads
// a shard's progress from it).
struct OpatJobState {
  std::string job_name, tuning_name, ops_path, result_path;
  bool finished = false;
  double elapsed_s = 0;
  size_t ops = 0;                 // operators in the job's list
  std::vector<OpRecord> records;  // those done
};
// nullopt when no OPAT job has been checkpointed in `bank`.
Result<std::optional<OpatJobState>> LatestOpatJob(const Bank& bank);

}  // namespace tilebank::engine
