#include "engine/jobs/job.h"

#include <cstdio>
#include <filesystem>

#include "engine/jobs/gdat_job.h"
#include "engine/jobs/model_opat_job.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/opat_job.h"
#include "repo/improvement.h"

namespace tilebank::engine {
namespace {

// Job type 2: an operator list, or a model's operators timed as the whole model before and after.
class OpatJob : public Job {
 public:
  const JobType& type() const override { return JobTypeOf(2); }
  Result<JobOutcome> Run(const JobRequest& r) const override {
    OpatJobOptions o;
    PlaceJob(r.place, &o);
    o.reload = r.reload;
    o.time_budget_s = r.time_budget_s;
    o.tune = r.tune;
    o.tune_op_names = r.tune_op_names;
    o.tune_op_types = r.tune_op_types;
    o.listeners = r.listeners;
    JobOutcome out;
    OpatJobReport report;
    if (IsModelPath(r.input)) {
      ModelOpatOptions m;
      m.model_path = r.input;
      m.input_shapes = r.input_shapes;
      m.job = o;
      auto model_report = RunModelOpatJob(m);
      if (!model_report.ok()) return model_report.status();
      out.lines.push_back(model_report->note);
      report = std::move(model_report->job);
    } else {
      o.ops_path = r.input;
      auto list_report = RunOpatJob(o);
      if (!list_report.ok()) return list_report.status();
      report = std::move(*list_report);
    }
    if (report.any_failed) out.lines.push_back("some operators failed to tune: see tuning_failed_operators in the result file");
    out.tuning_name = report.tuning_name;
    out.result_path = report.result_path;
    out.improvement = PercentText(report.improvement_percent);
    out.stopped = report.stopped;
    out.any_failed = report.any_failed;
    return out;
  }
};

// Job type 1: a model's subgraphs (or a subgraph file's, their times standing for the model's).
class SgatJob : public Job {
 public:
  const JobType& type() const override { return JobTypeOf(1); }
  Result<JobOutcome> Run(const JobRequest& r) const override {
    ModelSgatOptions o;
    (IsModelPath(r.input) ? o.model_path : o.subgraphs_path) = r.input;
    o.input_shapes = r.input_shapes;
    PlaceJob(r.place, &o);
    o.trials = r.tune.trials;
    o.time_budget_s = r.time_budget_s;
    o.reload = r.reload;
    o.listeners = r.listeners;
    auto report = RunModelSgatJob(o);
    if (!report.ok()) return report.status();
    JobOutcome out;
    out.tuning_name = report->tuning_name;
    out.result_path = report->result_path;
    if (report->whole_model) {
      out.lines.push_back(report->note);
      out.improvement = report->improvement;
    } else {
      char line[160];
      std::snprintf(line, sizeof line, "subgraphs: %.3f ms before, %.3f ms after (each subgraph's time x its occurrences)", report->baseline_ms,
                    report->result_ms);
      out.lines.push_back(line);
      out.improvement = ImprovementText(report->baseline_ms, report->result_ms);
    }
    out.stopped = report->stopped;  // a subgraph that failed is listed in the result file; the job still succeeds
    return out;
  }
};

// Job type 4: gradient fusion planned from a recorded profile (and measured plans, when given).
class GdatJob : public Job {
 public:
  const JobType& type() const override { return JobTypeOf(4); }
  Result<JobOutcome> Run(const JobRequest& r) const override {
    GdatOptions o;
    o.profile_path = r.input;
    PlaceJob(r.place, &o);
    o.max_segments = r.max_segments;
    o.measured_path = r.measured_path;
    o.print_plans = r.print_plans;
    auto report = RunGdatJob(o);
    if (!report.ok()) return report.status();
    JobOutcome out;
    out.tuning_name = report->tuning_name;
    out.result_path = report->result_path;
    if (r.print_plans) {
      out.plans = report->result;
      return out;
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  report->measured ? "gradients %s: %s; median training iteration, measured: %.3f ms with DDP's default plan, %.3f ms with the plan kept"
                                   : "gradients %s: %s; backward start to the last AllReduce done, predicted: %.3f ms with DDP's default plan, %.3f ms with the plan kept",
                  report->repo_key.c_str(), report->status.c_str(), report->before_ms, report->after_ms);
    out.lines.push_back(line);
    out.improvement = ImprovementText(report->before_ms, report->after_ms);
    return out;
  }
};

}  // namespace

const Job* FindJob(int job_type) {
  static const OpatJob opat;
  static const SgatJob sgat;
  static const GdatJob gdat;
  for (const Job* job : std::initializer_list<const Job*>{&opat, &sgat, &gdat})
    if (job->type().id == job_type) return job;
  return nullptr;
}

bool IsModelPath(const std::string& path) { return std::filesystem::path(path).extension() == ".onnx"; }

}  // namespace tilebank::engine
