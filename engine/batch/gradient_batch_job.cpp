#include "engine/batch/gradient_batch_job.h"

#include <chrono>
#include <cstdlib>
#include <memory>

#include "engine/jobs/gdat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/stored_job.h"
#include "engine/jobs/task_loop.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "base/json_text.h"

namespace tilebank::engine {

std::string GradientShardCheckpoint::ToJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : records) list.push_back(r.ToJson());
  return DumpJson({{"job", "gdat-batch"}, {"result_path", result_path}, {"keys", keys}, {"records", list}, {"finished", finished},
                   {"elapsed_s", elapsed_s}});
}

Result<GradientShardCheckpoint> GradientShardCheckpoint::FromJson(const std::string& text, const std::string& job_name) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("job") || j["job"] != "gdat-batch")
    return Status::InvalidInput("job '" + job_name + "' is not a gradient fusion batch shard");
  try {
    GradientShardCheckpoint cp;
    cp.job_name = job_name;
    cp.result_path = j.at("result_path").get<std::string>();
    cp.keys = j.at("keys").get<std::vector<std::string>>();
    for (const auto& r : j.at("records")) cp.records.push_back(GradientTaskRecord::FromJson(r));
    cp.finished = j.at("finished").get<bool>();
    cp.elapsed_s = j.at("elapsed_s").get<double>();
    if (cp.records.size() > cp.keys.size()) return Status::Corrupt("job '" + job_name + "' records more tasks than it has");
    for (size_t i = 0; i < cp.records.size(); ++i)
      if (cp.records[i].key != cp.keys[i]) return Status::Corrupt("job '" + job_name + "': record " + std::to_string(i) + " is of another task");
    return cp;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corrupt("job '" + job_name + "': a checkpoint field is missing or of the wrong type: " + e.what());
  }
}

Result<std::optional<GradientShardCheckpoint>> LatestGradientShard(const Bank& bank) {
  auto stored = PeekLatestJob(bank, JobTypeOf(4).latest_key);
  if (!stored.ok()) return stored.status();
  if (!*stored) return std::optional<GradientShardCheckpoint>();
  auto cp = GradientShardCheckpoint::FromJson((*stored)->second, (*stored)->first);
  if (!cp.ok()) return cp.status();
  return std::optional<GradientShardCheckpoint>(std::move(cp.value()));
}

Result<GradientShardReport> RunGradientShard(const std::vector<const BatchTask*>& tasks, const GradientShardOptions& o) {
  auto bank = Bank::Open(BankDirUnder(o.bank_root, o.soc_version), {OpenMode::kCreateIfMissing, o.soc_version, o.fingerprint});
  if (!bank.ok()) return bank.status();
  GradientShardCheckpoint cp;
  cp.job_name = o.job_name;
  cp.result_path = o.output_dir + "/aoe_result_gdat_" + o.job_name + ".json";
  for (const BatchTask* t : tasks) cp.keys.push_back(t->key);
  double earlier_s = 0;  // seconds of the job's earlier runs
  if (o.resume) {
    auto latest = LatestGradientShard(**bank);
    if (!latest.ok()) return latest.status();
    if (*latest && (*latest)->job_name == o.job_name) {
      if ((*latest)->keys != cp.keys)
        return Status::Refused("the checkpoint of " + o.job_name + " in " + (*bank)->dir() + " is of other tasks than the plan's shard");
      cp.records = std::move((*latest)->records);
      earlier_s = (*latest)->elapsed_s;
    }
  }
  cp.elapsed_s = earlier_s;  // until this run's first task commits
  size_t failed_before = 0;
  for (const auto& r : cp.records) failed_before += r.status == "failed";
  TaskLoop loop({&JobTypeOf(4), cp.job_name, o.job_name, cp.result_path, tasks.size(), earlier_s, cp.records.size(), failed_before,
                 o.listeners, o.on_task_done, {{"soc_version", o.soc_version}}});
  auto elapsed = [&] { return loop.Elapsed(); };
  auto put_checkpoint = [&](WriteTxn& txn, const GradientShardCheckpoint& c) -> Status { return loop.PutCheckpoint(txn, c.ToJson()); };
  TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) { return put_checkpoint(txn, cp); }));
  TB_RETURN_IF_ERROR(loop.WriteResult(GdatListResultJson(o.job_name, elapsed(), cp.records, false)));
  loop.JobStarted();

  for (size_t t = cp.records.size(); t < tasks.size(); ++t) {
    const auto task_start = std::chrono::steady_clock::now();
    loop.TaskStarted(t, tasks[t]->name, "gradients");
    GradientTaskRecord record;
    record.key = tasks[t]->key;
    record.name = tasks[t]->name;
    // The checkpoint with this task's record, as it is committed (with the entry when one is stored).
    auto with_record = [&](const GradientTaskRecord& r) {
      GradientShardCheckpoint next = cp;
      next.records.push_back(r);
      next.elapsed_s = elapsed();
      return next;
    };
    GdatOptions g;
    g.profile = tasks[t]->payload;
    g.profile_path = "the profile of " + tasks[t]->name;
    g.tuning_name = tasks[t]->name;
    g.soc_version = o.soc_version;
    g.fingerprint = o.fingerprint;
    g.output_dir = o.output_dir;
    g.bank = bank->get();
    g.write_result_file = false;
    bool committed = false;  // the checkpoint went into the entry's transaction (which failing stops the shard)
    g.commit_with_entry = [&](WriteTxn& txn, const GdatReport& report) -> Status {
      GradientTaskRecord r = record;
      r.status = report.status;
      r.before_ms = report.before_ms;
      r.after_ms = report.after_ms;
      r.tune_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - task_start).count();
      TB_RETURN_IF_ERROR(put_checkpoint(txn, with_record(r)));
      committed = true;
      record = r;
      return Status::Ok();
    };
    auto planned = RunGdatJob(g);
    if (planned.ok() && !committed) {
      record.status = planned->status;
      record.before_ms = planned->before_ms;
      record.after_ms = planned->after_ms;
    } else if (!planned.ok()) {
      // A profile that cannot be planned fails its task; the bank failing stops the shard.
      if (planned.status().code() != StatusCode::kInvalidInput || committed) return planned.status();
      record.status = "failed";
      record.failure = planned.status().message();
    }
    if (!committed) {
      record.tune_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - task_start).count();
      const GradientShardCheckpoint next = with_record(record);
      TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) { return put_checkpoint(txn, next); }));
    }
    cp.records.push_back(record);
    TB_RETURN_IF_ERROR(loop.WriteResult(GdatListResultJson(o.job_name, elapsed(), cp.records, false)));
    if (loop.TaskDone(**bank, record.status, record.failure, record.before_ms * 1000, record.after_ms * 1000, {{"key", record.key}}) &&
        t + 1 < tasks.size()) {
      loop.JobDone(/*stopped=*/true);
      return GradientShardReport{cp.result_path, loop.failed() > 0, /*stopped=*/true};
    }
  }
  cp.finished = true;
  cp.elapsed_s = elapsed();
  TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) { return put_checkpoint(txn, cp); }));
  GradientShardReport report;
  report.result_path = cp.result_path;
  for (const auto& r : cp.records) report.any_failed |= r.status == "failed";
  TB_RETURN_IF_ERROR(loop.WriteResult(GdatListResultJson(o.job_name, cp.elapsed_s, cp.records, true)));
  loop.JobDone(/*stopped=*/false);
  return report;
}

}  // namespace tilebank::engine
