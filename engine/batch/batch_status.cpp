#include "engine/batch/batch_status.h"

#include <map>

#include "repo/bank.h"

#include "engine/batch/shard_dir.h"

namespace tilebank::engine {

Result<std::vector<ShardStatus>> ReadBatchStatus(const BatchPlan& plan, const std::string& bank_root) {
  std::vector<ShardStatus> rows;
  for (size_t s = 0; s < plan.shards(); ++s) {
    ShardStatus row;
    row.shard = s;
    row.soc_version = plan.SocOf(s);
    row.tasks = plan.TasksOf(s).size();
    row.estimated_s = plan.ShardCost(s);
    auto state = ReadShardState(ShardDir(bank_root, s));
    if (!state.ok()) return state.status();
    if (!*state || (*state)->tasks_done < 0) {
      // No counts from a worker: the shard's bank says what was done (no worker writes it now,
      // or one of a tilebank that did not record counts).
      auto bank = OpenShardBankReadOnly(plan, bank_root, s);
      if (!bank.ok()) return bank.status();
      auto progress = ReadShardProgress(plan, bank->get());
      if (!progress.ok()) return progress.status().WithContext("shard " + std::to_string(s));
      row.done = progress->Done();
      row.failed = progress->Failed();
      if (!*state) row.state = progress->finished ? "done" : progress->started ? "stopped" : "waiting";
    } else {
      // The worker's own counts: a worker on another host may be writing the bank.
      row.done = static_cast<size_t>((*state)->tasks_done);
      row.failed = static_cast<size_t>((*state)->tasks_failed);
    }
    if (*state) {
      const ShardState& st = **state;
      if (st.plan_id != plan.plan_id)
        return Status::Refused(ShardDir(bank_root, s) + " holds shard " + std::to_string(s) + " of plan " + st.plan_id + ", not of plan " +
                               plan.plan_id);
      row.worker = st.host + ":" + std::to_string(st.pid);
      row.run_id = st.run_id;
      row.message = st.message;
      row.state = st.state == "running" && WorkerGone(st) ? "stopped" : st.state;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

nlohmann::json Totals(const std::vector<const ShardStatus*>& shards) {
  std::map<std::string, size_t> states;
  size_t tasks = 0, done = 0, failed = 0;
  for (const ShardStatus* s : shards) {
    states[s->state]++;
    tasks += s->tasks;
    done += s->done;
    failed += s->failed;
  }
  return {{"shards", shards.size()}, {"states", states}, {"tasks", tasks}, {"done", done}, {"failed", failed}, {"left", tasks - done}};
}

}  // namespace

nlohmann::json BatchStatusJson(const BatchPlan& plan, const std::vector<ShardStatus>& shards) {
  nlohmann::json list = nlohmann::json::array();
  std::vector<const ShardStatus*> all;
  std::map<std::string, std::vector<const ShardStatus*>> by_soc;
  for (const auto& s : shards) {
    list.push_back({{"shard", s.shard}, {"soc_version", s.soc_version}, {"state", s.state}, {"tasks", s.tasks}, {"done", s.done},
                    {"failed", s.failed}, {"left", s.Left()}, {"estimated_s", s.estimated_s}, {"worker", s.worker}, {"message", s.message}});
    all.push_back(&s);
    by_soc[s.soc_version].push_back(&s);
  }
  nlohmann::json socs = nlohmann::json::object();
  for (const auto& [soc, rows] : by_soc) socs[soc] = Totals(rows);
  nlohmann::json j = {{"plan_id", plan.plan_id}, {"soc_versions", plan.soc_versions}, {"job_type", plan.job_type}, {"shards", list},
                      {"total", Totals(all)}, {"by_soc_version", socs}};
  if (plan.soc_versions.size() == 1) j["soc_version"] = plan.soc_versions[0];  // as before plans had several
  return j;
}

}  // namespace tilebank::engine
