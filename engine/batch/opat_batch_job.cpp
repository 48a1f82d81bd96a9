// Job type 2 (OPAT) in a batch: operators, from operator lists and models' operators; a shard is an
// operator list tuned by the OPAT job, resumed from its checkpoint.
#include "engine/batch/batch_job.h"
#include "engine/jobs/model_opat_job.h"
#include "engine/jobs/opat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/runtime/model_session.h"

namespace tilebank::engine {
namespace {

class Opat : public BatchJob {
 public:
  Result<std::vector<BatchTask>> ModelTasks(const model::Graph& graph, const std::string&, int trials) const override {
    auto executor = model::BindToBank(graph, nullptr);  // built-in policies: the bank does not change the tasks
    if (!executor.ok()) return executor.status();
    const nlohmann::json list = ModelOpList(**executor, {});
    std::vector<BatchTask> tasks;
    for (size_t i = 0; i < list.size(); ++i) {
      auto t = OperatorTask(list[i], i, trials);
      if (!t.ok()) return t.status();
      tasks.push_back(std::move(*t));
    }
    return tasks;
  }

  Status CheckInputs(const BatchInputs& in) const override { return CheckTuningInputs(in); }

  Result<ShardJobResult> RunShard(const BatchPlan&, size_t, const ShardJobContext& c) const override {
    OpatJobOptions job;
    job.ops_path = c.input_path;
    job.tuning_name = c.job_name;
    job.bank_root = c.bank_dir;
    job.soc_version = c.soc_version;
    job.fingerprint = c.fingerprint;
    job.output_dir = c.output_dir;
    if (c.resume) job.reload = "";
    job.keep_builtin_wins = true;
    job.tune.trials = c.trials;
    job.tune.seed = c.seed;
    job.listeners = c.listeners;
    job.on_task_done = c.on_task_done;
    auto report = RunOpatJob(job);
    if (!report.ok()) return report.status();
    return ShardJobResult{report->result_path, report->any_failed};
  }

  Result<ShardProgress> ReadProgress(const Bank& bank) const override {
    ShardProgress p;
    auto job = LatestOpatJob(bank);
    if (!job.ok()) return job.status();
    if (!*job) return p;
    p.started = true;
    p.finished = (*job)->finished;
    p.elapsed_s = (*job)->elapsed_s;
    p.tuning_name = (*job)->tuning_name;
    p.result_path = (*job)->result_path;
    p.operators = std::move((*job)->records);
    return p;
  }

  nlohmann::json ResultJson(const std::string& name, double elapsed_s, const ShardProgress& records, bool finished) const override {
    return OpatResultJson(name, elapsed_s, records.operators, finished);
  }
};

}  // namespace

const BatchJob& OpatBatchJob() {
  static const Opat job;
  return job;
}

}  // namespace tilebank::engine
