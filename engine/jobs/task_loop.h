// The checkpointed task loop every tuning job runs (OPAT, SGAT, gradient batches): the job's stamp
// (name and result file), its elapsed time carried across runs, the checkpoint and the "latest"
// pointer committed with each task, the result file rewritten after each task, the tasks done and
// failed, the batch hook, the events (engine/jobs/job_events.h) and the trials file beside the
// result file. A job keeps what is its own: the checkpoint's content, each task's work and entry.
#pragma once
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_events.h"
#include "engine/jobs/job_types.h"
#include "engine/jobs/task_done.h"
#include "base/status.h"

namespace tilebank {
class Bank;
class WriteTxn;
}  // namespace tilebank

namespace tilebank::engine {

// "20261122_101502123": YYYYMMDD_HHMMSS and milliseconds, as in AOE's result file names.
std::string ResultTimestamp();

// A new job's name and result file: <kind>_<timestamp>_<pid>, <output_dir>/aoe_result_<kind>_<timestamp>_<pid>.json.
// Creates output_dir ("" is "."); kInvalidInput when it cannot.
struct JobStamp {
  std::string job_name, result_path;
};
Result<JobStamp> NewJobStamp(const JobType& type, const std::string& output_dir);

// The trials file of a result file: aoe_result_X.json -> aoe_trials_X.jsonl (beside it, and not
// matched by aoe_result_* as AOE's result files are), the job's events
// one JSON object a line, "event" naming each (JobEventKindName), "elapsed_s" on every line:
//   job_started: "job_type", "job_name", "tuning_name", "tasks", "done", "unix_s" (the wall clock), and the job's "about"
//   trial:       "task", "name", "op" and TrialRecord's fields
//   task_done:   "task", "name", "op", "status", "before_us", "after_us", "failure", "detail" (the job's)
//   job_done:    "done", "failed", "stopped"
// A reloaded job appends to it.
std::string TrialsPathOf(const std::string& result_path);

struct TaskLoopSetup {
  const JobType* type = nullptr;
  std::string job_name, tuning_name, result_path;
  size_t tasks = 0;
  double elapsed_before_s = 0;  // the job's earlier runs
  size_t done_before = 0, failed_before = 0;
  JobListeners listeners;
  TaskDoneHook on_task_done;
  nlohmann::json about = nlohmann::json::object();  // the job_started line's extra fields: model, soc_version, ...
};

class TaskLoop {
 public:
  explicit TaskLoop(TaskLoopSetup setup);
  ~TaskLoop();

  // Seconds over every run of the job; of this run alone.
  double Elapsed() const;
  double ElapsedThisRun() const;

  // The job's checkpoint `text` under its name, and the latest pointer of its type to it.
  Status PutCheckpoint(WriteTxn& txn, const std::string& text) const;
  Status WriteResult(const nlohmann::json& result) const;

  void JobStarted();
  void TaskStarted(size_t index, const std::string& name, const std::string& op);
  // A trial of the task last started: an event and a line of the trials file.
  void Trial(const TrialRecord& trial);
  // After the task's record (and entry) committed. Returns true when the job is to stop here: a
  // listener asked, or a test's TILEBANK_TEST_EXIT_AFTER_TASKS=N (which exits the process, as a kill would).
  bool TaskDone(const Bank& bank, const std::string& status, const std::string& failure, double before_us, double after_us,
                const nlohmann::json& detail = nlohmann::json::object());
  void JobDone(bool stopped);

  size_t done() const { return done_; }
  size_t failed() const { return failed_; }

 private:
  JobEvent Event(JobEvent::Kind kind) const;
  void Emit(const JobEvent& e) const;
  void Log(nlohmann::json line, double elapsed_s) const;  // a line of the trials file

  TaskLoopSetup s_;
  std::chrono::steady_clock::time_point start_;
  size_t done_ = 0, failed_ = 0;
  double best_gain_percent_ = 0;
  size_t task_ = 0;
  std::string task_name_, task_op_;
  std::FILE* trials_ = nullptr;
};

}  // namespace tilebank::engine
