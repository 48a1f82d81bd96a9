#include "engine/batch/shard_dir.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/batch/batch_job.h"
#include "repo/bank.h"
#include "repo/bank_location.h"

namespace tilebank::engine {

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

std::string ShardDir(const std::string& bank_root, size_t shard) { return bank_root + "/shards/" + std::to_string(shard); }

std::string ShardInputPath(const BatchPlan& plan, const std::string& bank_root, size_t shard) {
  return ShardDir(bank_root, shard) + "/" + JobTypeOf(plan.job_type).input_file;
}

nlohmann::json ShardInputJson(const BatchPlan& plan, size_t shard) { return BatchJobOf(plan.job_type).ShardInput(plan, shard); }

Status WriteShardState(const std::string& dir, const ShardState& s) {
  return WriteJsonAtomically(dir + "/state.json", {{"plan_id", s.plan_id}, {"state", s.state}, {"host", s.host}, {"pid", s.pid}, {"run_id", s.run_id},
                                                   {"started", s.started}, {"updated", Now()}, {"message", s.message},
                                                   {"tasks_done", s.tasks_done}, {"tasks_failed", s.tasks_failed}},
                             1);
}

Result<std::optional<ShardState>> ReadShardState(const std::string& dir) {
  const std::string path = dir + "/state.json";
  std::ifstream in(path);
  if (!in) return std::optional<ShardState>();
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corrupt(path + " is not valid JSON");
  try {
    ShardState s;
    s.plan_id = j.at("plan_id").get<std::string>();
    s.state = j.at("state").get<std::string>();
    s.host = j.at("host").get<std::string>();
    s.pid = j.at("pid").get<long>();
    s.started = j.at("started").get<double>();
    s.updated = j.at("updated").get<double>();
    s.message = j.at("message").get<std::string>();
    s.run_id = j.value("run_id", std::string());
    s.tasks_done = j.value("tasks_done", -1L);
    s.tasks_failed = j.value("tasks_failed", 0L);
    return std::optional<ShardState>(std::move(s));
  } catch (const nlohmann::json::exception& e) {
    return Status::Corrupt(path + ": " + e.what());
  }
}

std::string CurrentRunId() {
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "SLURM_JOB_ID"})
    if (const char* v = std::getenv(name); v && *v) return std::string(name) + "=" + v;
  return "";
}

ShardState RunningState(const std::string& plan_id) {
  ShardState s;
  s.run_id = CurrentRunId();
  s.plan_id = plan_id;
  s.state = "running";
  s.host = HostName();
  s.pid = getpid();
  s.started = Now();
  return s;
}

bool WorkerGone(const ShardState& s) {
  return s.host == HostName() && s.pid > 0 && kill(static_cast<pid_t>(s.pid), 0) != 0 && errno == ESRCH;
}

size_t ShardProgress::Failed() const {
  size_t n = 0;
  for (const auto& r : operators) n += r.status == "failed";
  for (const auto& r : subgraphs) n += r.status == "failed";
  for (const auto& r : gradients) n += r.status == "failed";
  return n;
}

Result<std::unique_ptr<Bank>> OpenShardBankReadOnly(const BatchPlan& plan, const std::string& bank_root, size_t shard) {
  const std::string bank_dir = BankDirUnder(ShardDir(bank_root, shard), plan.SocOf(shard));
  if (!IsBankDir(bank_dir)) return std::unique_ptr<Bank>();
  auto bank = Bank::Open(bank_dir, {OpenMode::kReadOnly, plan.SocOf(shard), ""});
  if (!bank.ok() && bank.status().code() == StatusCode::kNotFound) return std::unique_ptr<Bank>();
  if (!bank.ok()) return bank.status().WithContext("shard " + std::to_string(shard) + " (" + bank_dir + ")");
  return std::move(bank.value());
}

Result<ShardProgress> ReadShardProgress(const BatchPlan& plan, const Bank* bank) {
  if (!bank) return ShardProgress{};
  return BatchJobOf(plan.job_type).ReadProgress(*bank);
}

}  // namespace tilebank::engine
