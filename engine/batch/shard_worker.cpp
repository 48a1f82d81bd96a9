#include "engine/batch/shard_worker.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "engine/batch/batch_job.h"
#include "engine/batch/shard_dir.h"
#include "engine/batch/shard_publish.h"
#include "engine/jobs/result_file.h"
#include "engine/core/soc_version.h"
#include "repo/bank_location.h"

namespace tilebank::engine {

namespace {

// The job on the shard's input, resumed when `resume`, its bank under `bank_dir` (the shard's
// directory, or node-local storage), its result file in the shard's directory. Returns the result
// file and whether a task failed.
Result<std::pair<std::string, bool>> TuneShard(const BatchPlan& plan, size_t shard, const ShardWorkOptions& o, const std::string& bank_dir,
                                               bool resume, const TaskDoneHook& on_task_done) {
  ShardJobContext c;
  c.job_name = "batch_" + plan.plan_id + "_shard_" + std::to_string(shard);
  c.input_path = ShardInputPath(plan, o.bank_root, shard);
  c.output_dir = ShardDir(o.bank_root, shard);
  c.bank_dir = bank_dir;
  c.soc_version = plan.SocOf(shard);
  c.fingerprint = o.fingerprint;
  c.resume = resume;
  c.trials = plan.trials;
  c.seed = plan.seed;
  c.listeners = o.listeners;
  c.on_task_done = on_task_done;
  auto result = BatchJobOf(plan.job_type).RunShard(plan, shard, c);
  if (!result.ok()) return result.status();
  return std::make_pair(result->result_path, result->any_failed);
}

// Whether `path` holds a finished job's result file: only those carry "tuning_time(s)".
bool IsFinishedResultFile(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_array() && !j.empty() && j[0].is_object() && j[0].contains("basic") && j[0]["basic"].is_object() &&
         j[0]["basic"].contains("tuning_time(s)");
}

// The finished shard's result file, from its checkpoint (as its job wrote it at the end).
Status WriteFinishedResult(const BatchPlan& plan, const ShardProgress& p) {
  return WriteJsonAtomically(p.result_path, BatchJobOf(plan.job_type).ResultJson(p.tuning_name, p.elapsed_s, p, true));
}

// A shard's node-local copy, once published; a leftover (a failed removal) is replaced next time.
void RemoveLocalShard(const std::string& work_root, size_t shard) {
  std::error_code ec;
  std::filesystem::remove_all(ShardDir(work_root, shard), ec);
}

// RunShard's work once it holds the shard's lock.
Result<ShardWorkReport> TuneLockedShard(const BatchPlan& plan, size_t shard, const ShardWorkOptions& o) {
  const std::string dir = ShardDir(o.bank_root, shard);
  ShardWorkReport report;
  report.shard = shard;
  report.tasks = plan.TasksOf(shard).size();
  ShardState state = RunningState(plan.plan_id);
  auto fail = [&](const Status& s) {
    state.state = "failed";
    state.message = s.message();
    (void)WriteShardState(dir, state);  // the error itself is the one to report
    return s.WithContext("shard " + std::to_string(shard));
  };
  // Where the shard's bank is tuned: in its directory, or in node-local storage that starts from the
  // bank published to its directory and publishes to it after each task (engine/batch/shard_publish.h).
  const bool local = !o.local_dir.empty();
  const std::string work_root = local ? o.local_dir + "/" + plan.plan_id : o.bank_root;
  const std::string shared_bank = BankDirUnder(dir, plan.SocOf(shard)), work_bank = BankDirUnder(ShardDir(work_root, shard), plan.SocOf(shard));
  if (local)
    if (Status s = FetchShardBank(shared_bank, work_bank); !s.ok()) return fail(s);
  Result<ShardProgress> progress = ShardProgress();
  {
    auto bank = OpenShardBankReadOnly(plan, work_root, shard);  // closed before the job opens it
    if (!bank.ok()) return fail(bank.status());
    progress = ReadShardProgress(plan, bank->get());
  }
  if (!progress.ok()) return fail(progress.status());
  state.tasks_done = static_cast<long>(progress->Done());
  state.tasks_failed = static_cast<long>(progress->Failed());
  if (progress->finished || report.tasks == 0) {
    report.already_done = progress->finished;
    report.result_path = progress->result_path;
    if (progress->finished && !progress->result_path.empty()) {
      // A worker killed after its last checkpoint but before the result file's last rewrite left
      // it "incomplete": it is written again from the checkpoint, in the shard's directory where
      // it is now (the bank root may have moved since).
      ShardProgress finished = *progress;
      finished.result_path = dir + "/" + std::filesystem::path(progress->result_path).filename().string();
      report.result_path = finished.result_path;
      if (!IsFinishedResultFile(finished.result_path))
        if (Status s = WriteFinishedResult(plan, finished); !s.ok())
          report.warning = "could not write the shard's result file again: " + s.message();
    }
    state.state = "done";
    TB_RETURN_IF_ERROR(WriteShardState(dir, state));
    if (local) RemoveLocalShard(work_root, shard);
    return report;
  }
  // A shard started on a node of another soc_version says so in its state, for `batch status`.
  // Gradient problems are planned, not measured: any machine plans them.
  if (JobTypeOf(plan.job_type).measures_here && plan.SocOf(shard) != HostSocVersion())
    return fail(Status::Refused("the shard tunes soc_version " + plan.SocOf(shard) + " but this machine is " + HostSocVersion() +
                                ": run it on nodes of that soc_version (a Slurm constraint or partition per soc_version)"));
  report.resumed = progress->started;
  // The input is the plan's, written the same way each time, so a resumed job finds the list it started with.
  if (Status s = WriteJsonAtomically(ShardInputPath(plan, o.bank_root, shard), ShardInputJson(plan, shard), 1); !s.ok()) return fail(s);
  TB_RETURN_IF_ERROR(WriteShardState(dir, state));
  Status unpublished;  // a publish that failed; the next one, or the last, carries its task too
  auto tuned = TuneShard(plan, shard, o, ShardDir(work_root, shard), report.resumed, [&](const Bank& bank, size_t done, size_t failed) {
    if (local && !(unpublished = PublishShardBank(bank, shared_bank)).ok()) return;  // counts say what is published
    state.tasks_done = static_cast<long>(done);
    state.tasks_failed = static_cast<long>(failed);
    (void)WriteShardState(dir, state);  // progress for readers; a failed write only delays it
  });
  if (!tuned.ok()) return fail(tuned.status());
  std::tie(report.result_path, report.any_failed) = *tuned;
  if (local) {
    // The job's last commit (the finished checkpoint) comes after its last task's hook.
    auto bank = Bank::Open(work_bank, {OpenMode::kReadOnly, plan.SocOf(shard), ""});
    if (!bank.ok()) return fail(bank.status());
    if (Status s = PublishShardBank(**bank, shared_bank); !s.ok()) return fail(s.WithContext("publishing the shard's bank"));
    bank->reset();
    RemoveLocalShard(work_root, shard);
  }
  state.state = "done";
  TB_RETURN_IF_ERROR(WriteShardState(dir, state));
  return report;
}

}  // namespace

Result<ShardWorkReport> RunShard(const BatchPlan& plan, size_t shard, const ShardWorkOptions& o) {
  if (shard >= plan.shards())
    return Status::InvalidInput("shard " + std::to_string(shard) + ": the plan has shards 0 to " + std::to_string(plan.shards() - 1));
  const std::string dir = ShardDir(o.bank_root, shard);
  auto previous = ReadShardState(dir);
  if (!previous.ok()) return previous.status();
  if (*previous && (*previous)->plan_id != plan.plan_id)
    return Status::Refused(dir + " holds shard " + std::to_string(shard) + " of plan " + (*previous)->plan_id + ", not of this plan (" +
                           plan.plan_id + "): give this plan a bank root of its own");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidInput("cannot create " + dir + ": " + ec.message());
  // One worker a shard: a second one (a requeue while the first still runs) is refused.
  const int lock = open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) return Status::IoError("cannot open " + dir + "/lock: " + std::strerror(errno));
  if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    close(lock);
    return Status::Refused("shard " + std::to_string(shard) + " is being tuned by another worker" +
                           (*previous ? " (" + (*previous)->host + ":" + std::to_string((*previous)->pid) + ")" : std::string()));
  }
  auto result = TuneLockedShard(plan, shard, o);  // the lock goes with this process, or here
  close(lock);
  return result;
}

}  // namespace tilebank::engine
