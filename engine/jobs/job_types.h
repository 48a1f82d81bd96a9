// AOE's job types as tilebank runs them: one table that the CLI (tools/tune_command.cpp), batches
// (engine/batch) and the report (tools/report_command.cpp) read, so a job type's names, files,
// checkpoint key, inputs and options are spelled once.
#pragma once
#include <string>
#include <vector>

namespace tilebank::engine {

struct JobType {
  int id;                     // AOE's job_type: 1, 2 or 4
  const char* name;           // "SGAT", "OPAT", "GDAT"
  const char* what;           // "subgraph tuning", "operator tuning", "gradient fusion"
  const char* result_kind;    // result files aoe_result_<result_kind>_*.json; job names <result_kind>_*
  const char* latest_key;     // the jobs database key naming the latest checkpointed job of this type
  // A batch of this type:
  const char* task_kind;      // PLAN.json's task "kind": subgraph | operator | gradient
  const char* payload_field;  // the PLAN.json task field holding the task's input
  const char* input_file;     // a shard's input file in its directory
  const char* tasks_label;    // how `batch plan` counts the tasks
  // Whether its tasks are measured on the machine that runs them (then only a machine of the
  // job's soc_version may), or planned from recorded measurements (any machine may); planned jobs
  // take no trials or seed.
  bool measures_here;
  // Whether a stopped job goes on (--reload, reload=); a planned job runs in one step.
  bool resumable;
  // What `tilebank tune` gives it: one of these inputs ("--model M.onnx": the flag, then what it
  // names), and the options no other job type takes.
  std::vector<std::string> inputs;
  std::vector<std::string> own_options;
};

// The job types in the order the CLI lists them (2, 1, 4).
const std::vector<JobType>& JobTypes();

// The job type `id`; nullptr for any other number.
const JobType* FindJobType(int id);

// The job type `id`, which was checked to be one of them (a plan read, a flag validated).
const JobType& JobTypeOf(int id);

// The job type a result file's kind names ("opat", "sgat", "gdat"); nullptr for others.
const JobType* JobTypeOfResultKind(const std::string& result_kind);

// "2 (OPAT), 1 (SGAT) or 4 (GDAT)": for messages naming the choices.
std::string JobTypeChoices();

}  // namespace tilebank::engine
