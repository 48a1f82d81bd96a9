// The job types behind one interface: what the command line (tools/tune_command.cpp) and Python
// (python/native/tune.cpp) run. A request holds what any job type takes, each caller having checked
// its own flags; an outcome what any job type reports. FindJob is the one place a job-type number
// picks the code (engine/batch/batch_job.h is the interface's batch half).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_events.h"
#include "engine/jobs/job_place.h"
#include "engine/jobs/job_types.h"
#include "engine/tuning/tuner.h"
#include "base/status.h"

namespace tilebank::engine {

struct JobRequest {
  // A model (.onnx); or by job type an operator list (2), a subgraph file (1), a gradient profile
  // (4). Empty when `reload` names the job to go on with.
  std::string input;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  JobPlace place;
  std::optional<std::string> reload;  // go on with this job ("": the latest of its type)
  double time_budget_s = 0;           // 0: none
  TuneOptions tune;                   // trials, seed, strategies and modes (SGAT reads trials)
  std::vector<std::string> tune_op_names, tune_op_types;  // OPAT: tune only these (empty: all)
  size_t max_segments = 8;            // GDAT: AllReduce segments at most
  std::string measured_path;          // GDAT: plans measured live; the measured fastest is kept
  bool print_plans = false;           // GDAT: every plan with its prediction, nothing written
  JobListeners listeners;
};

struct JobOutcome {
  std::string tuning_name, result_path;
  std::vector<std::string> lines;  // what the job reports before its closing line (what it measured and decided)
  std::string improvement;         // the closing line's "Performance improved by" figure, "3.10%"
  bool stopped = false;            // a listener stopped it: a reload goes on
  bool any_failed = false;         // a task failed to tune (the result file lists it)
  nlohmann::json plans;            // GDAT with print_plans: the plans
};

class Job {
 public:
  virtual ~Job() = default;
  virtual const JobType& type() const = 0;
  virtual Result<JobOutcome> Run(const JobRequest& request) const = 0;
};

// The job of type `job_type`; nullptr for a number that is none (JobTypeChoices() names them).
const Job* FindJob(int job_type);

// Whether `path` names an ONNX model (by its extension): a job's input is a model or its own kind of file.
bool IsModelPath(const std::string& path);

}  // namespace tilebank::engine
