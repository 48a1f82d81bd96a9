// Job type 4 (GDAT) in a batch: gradient problems from profiles (the plan carries each profile); a
// shard is planned by RunGradientShard (gradient_batch_job.h), resumed from its checkpoint.
#include "engine/batch/batch_job.h"
#include "engine/batch/gradient_batch_job.h"
#include "engine/jobs/gdat_list_result.h"

namespace tilebank::engine {
namespace {

class Gdat : public BatchJob {
 public:
  Result<std::vector<BatchTask>> ModelTasks(const model::Graph&, const std::string&, int) const override {
    return Status::InvalidInput("a gradient fusion batch (-j 4) plans from gradient profiles, not models");
  }

  Status CheckInputs(const BatchInputs& in) const override {
    if (in.gradient_profiles.empty() || !in.models.empty() || !in.singleop.empty())
      return Status::InvalidInput("a gradient fusion batch (-j 4) plans from gradient profiles: give --gradients or --gradients-list (no model)");
    return Status::Ok();
  }

  Result<ShardJobResult> RunShard(const BatchPlan& plan, size_t shard, const ShardJobContext& c) const override {
    GradientShardOptions job;
    job.job_name = c.job_name;
    job.bank_root = c.bank_dir;
    job.soc_version = c.soc_version;
    job.fingerprint = c.fingerprint;
    job.output_dir = c.output_dir;
    job.resume = c.resume;
    job.listeners = c.listeners;
    job.on_task_done = c.on_task_done;
    std::vector<const BatchTask*> tasks;
    for (size_t t : plan.TasksOf(shard)) tasks.push_back(&plan.tasks[t]);
    auto report = RunGradientShard(tasks, job);
    if (!report.ok()) return report.status();
    return ShardJobResult{report->result_path, report->any_failed};
  }

  Result<ShardProgress> ReadProgress(const Bank& bank) const override {
    ShardProgress p;
    auto cp = LatestGradientShard(bank);
    if (!cp.ok()) return cp.status();
    if (!*cp) return p;
    p.started = true;
    p.finished = (*cp)->finished;
    p.elapsed_s = (*cp)->elapsed_s;
    p.tuning_name = (*cp)->job_name;
    p.result_path = (*cp)->result_path;
    p.gradients = std::move((*cp)->records);
    return p;
  }

  nlohmann::json ResultJson(const std::string& name, double elapsed_s, const ShardProgress& records, bool finished) const override {
    return GdatListResultJson(name, elapsed_s, records.gradients, finished);
  }
};

}  // namespace

const BatchJob& GdatBatchJob() {
  static const Gdat job;
  return job;
}

}  // namespace tilebank::engine
