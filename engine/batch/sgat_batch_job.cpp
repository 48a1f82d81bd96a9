// Job type 1 (SGAT) in a batch: models' distinct subgraphs; a shard is a subgraph file tuned by the
// SGAT job, resumed from its checkpoint.
#include "engine/batch/batch_job.h"
#include "engine/core/op_flops.h"
#include "engine/ir/node_op_spec.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/sgat_checkpoint.h"
#include "engine/jobs/stored_job.h"
#include "engine/passes/subgraph_file.h"

namespace tilebank::engine {
namespace {

class Sgat : public BatchJob {
 public:
  Result<std::vector<BatchTask>> ModelTasks(const model::Graph& graph, const std::string& model_name, int trials) const override {
    const auto subgraphs = model::DistinctSubgraphs(graph);
    const nlohmann::json file = model::SubgraphFileJson(subgraphs, model_name, "");  // each shard's file names its soc_version
    std::vector<BatchTask> tasks;
    for (size_t i = 0; i < subgraphs.size(); ++i) {
      double flops = 0;
      for (const auto& n : subgraphs[i].graph.nodes)
        if (auto op = model::NodeOpSpec(subgraphs[i].graph, n); op.ok()) flops += OpFlops(op->op);
      BatchTask t;
      t.kind = JobTypeOf(1).task_kind;
      t.payload = file["subgraphs"][i];
      t.key = t.payload.at("repo_key").get<std::string>();
      t.name = subgraphs[i].name;
      t.op_type = model::SubgraphOpType(subgraphs[i]);
      t.cost_s = EstimateTaskSeconds(flops, trials) + EstimateTaskSeconds(flops, 1);  // and the unfused baseline
      tasks.push_back(std::move(t));
    }
    return tasks;
  }

  Status CheckInputs(const BatchInputs& in) const override {
    TB_RETURN_IF_ERROR(CheckTuningInputs(in));
    if (!in.singleop.empty()) return Status::InvalidInput("--singleop is an operator list, for -j 2");
    return Status::Ok();
  }

  nlohmann::json ShardInput(const BatchPlan& plan, size_t shard) const override {
    return {{"format", "tilebank.subgraphs"}, {"version", 1}, {"model", "batch_" + plan.plan_id + "_shard_" + std::to_string(shard)},
            {"soc_version", plan.SocOf(shard)}, {"subgraphs", BatchJob::ShardInput(plan, shard)}};
  }

  Result<ShardJobResult> RunShard(const BatchPlan&, size_t, const ShardJobContext& c) const override {
    ModelSgatOptions job;
    if (c.resume) job.reload = "";
    else job.subgraphs_path = c.input_path;
    job.tuning_name = c.job_name;
    job.bank_root = c.bank_dir;
    job.soc_version = c.soc_version;
    job.fingerprint = c.fingerprint;
    job.output_dir = c.output_dir;
    job.trials = c.trials;
    job.listeners = c.listeners;
    job.on_task_done = c.on_task_done;
    auto report = RunModelSgatJob(job);
    if (!report.ok()) return report.status();
    bool failed = false;
    for (const auto& r : report->records) failed |= r.status == "failed";
    return ShardJobResult{report->result_path, failed};
  }

  Result<ShardProgress> ReadProgress(const Bank& bank) const override {
    ShardProgress p;
    auto stored = PeekLatestJob(bank, kLatestSgatJob);
    if (!stored.ok()) return stored.status();
    if (!*stored) return p;
    auto cp = SgatCheckpoint::FromJson((*stored)->second, (*stored)->first);
    if (!cp.ok()) return cp.status();
    p.started = true;
    p.finished = cp->finished;
    p.elapsed_s = cp->elapsed_s;
    p.tuning_name = cp->tuning_name;
    p.result_path = cp->result_path;
    p.subgraphs = std::move(cp->records);
    return p;
  }

  nlohmann::json ResultJson(const std::string& name, double elapsed_s, const ShardProgress& records, bool finished) const override {
    const auto [before_ms, after_ms] = SubgraphListTimes(records.subgraphs);
    return SgatResultJson(name, elapsed_s, records.subgraphs, before_ms, finished ? std::optional<double>(after_ms) : std::nullopt);
  }
};

}  // namespace

const BatchJob& SgatBatchJob() {
  static const Sgat job;
  return job;
}

}  // namespace tilebank::engine
