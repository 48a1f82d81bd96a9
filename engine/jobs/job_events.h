// What a tuning job tells while it runs: job started, task started, trial measured, task done, job
// done. The task loop (engine/jobs/task_loop.h) emits them in every job type; the progress line
// (engine/jobs/progress_line.h), the trials file, the Python callbacks and the report read them.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilebank::engine {

// One candidate a task measured.
struct TrialRecord {
  int trial = 0, budget = 0;      // 1-based; the task's trial budget
  std::string template_id, mode;  // "halide.gemm", "schedule"; SGAT: "sgat.fused", "fusion"
  std::string policy;             // the candidate's knobs, "tile_m=32,tile_n=64"
  double time_us = 0;             // median
  double spread_us = 0;           // its repeats' spread (repo/entry.h Measurement)
  std::string verdict;            // "ok", "wrong result", "failed: <why>"
  double best_us = 0;             // the task's best so far, this trial included (0: none yet)
  double baseline_us = 0;         // what the task must beat (0: unknown)

  nlohmann::json ToJson() const;
  static TrialRecord FromJson(const nlohmann::json& j);
};

struct JobEvent {
  enum class Kind { kJobStarted, kTaskStarted, kTrial, kTaskDone, kJobDone };
  Kind kind = Kind::kJobStarted;
  int job_type = 0;                       // 1, 2 or 4
  std::string job_name, tuning_name, result_path;
  size_t tasks = 0;                       // the job's tasks
  size_t done = 0, failed = 0;            // tasks done and failed so far, over every run of the job
  double elapsed_s = 0;                   // over every run of the job
  double best_gain_percent = 0;           // the largest improvement a task has stored so far
  // kTaskStarted, kTrial, kTaskDone:
  size_t task = 0;                        // the task's index in the job
  std::string task_name, task_op;         // "conv1", "Conv"
  // kTrial:
  TrialRecord trial;
  // kTaskDone:
  std::string status, failure;            // add | update | hit | reserved | unsatisfied | failed | skipped
  double before_us = 0, after_us = 0;
  // kJobDone:
  bool stopped = false;                   // a listener stopped it: --reload goes on
};

const char* JobEventKindName(JobEvent::Kind kind);  // "job_started", "task_started", "trial", "task_done", "job_done"

// Who hears a job: each listener gets every event, on the tuning thread; `stop` is asked after each
// task commits, and a job it answers true for stops there (its checkpoint stays unfinished).
struct JobListeners {
  std::vector<std::function<void(const JobEvent&)>> on_event;
  std::function<bool()> stop;
};

}  // namespace tilebank::engine
