#include "engine/jobs/task_loop.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "engine/jobs/result_file.h"
#include "repo/bank.h"
#include "base/json_text.h"

namespace tilebank::engine {

std::string ResultTimestamp() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  std::tm tm{};
  localtime_r(&tv.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d_%02d%02d%02d%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(tv.tv_usec / 1000));
  return buf;
}

Result<JobStamp> NewJobStamp(const JobType& type, const std::string& output_dir) {
  const std::string dir = output_dir.empty() ? std::string(".") : output_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidInput("cannot create the output directory " + dir + ": " + ec.message());
  const std::string suffix = ResultTimestamp() + "_" + std::to_string(getpid());
  return JobStamp{std::string(type.result_kind) + "_" + suffix, dir + "/aoe_result_" + type.result_kind + "_" + suffix + ".json"};
}

std::string TrialsPathOf(const std::string& result_path) {
  const std::filesystem::path path(result_path);
  std::string stem = path.stem().string();
  const std::string prefix = "aoe_result_";
  stem = stem.rfind(prefix, 0) == 0 ? "aoe_trials_" + stem.substr(prefix.size()) : stem + ".trials";
  return (path.parent_path() / (stem + ".jsonl")).string();
}

TaskLoop::TaskLoop(TaskLoopSetup setup) : s_(std::move(setup)), start_(std::chrono::steady_clock::now()) {
  done_ = s_.done_before;
  failed_ = s_.failed_before;
  // Trials are appended: a reloaded job's file goes on where its earlier runs left it. A file that
  // cannot be opened loses the trials, not the job.
  if (!s_.result_path.empty()) trials_ = std::fopen(TrialsPathOf(s_.result_path).c_str(), "a");
}

TaskLoop::~TaskLoop() {
  if (trials_) std::fclose(trials_);
}

double TaskLoop::ElapsedThisRun() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
double TaskLoop::Elapsed() const { return s_.elapsed_before_s + ElapsedThisRun(); }

Status TaskLoop::PutCheckpoint(WriteTxn& txn, const std::string& text) const {
  TB_RETURN_IF_ERROR(txn.PutJob(s_.job_name, text));
  return txn.PutJob(s_.type->latest_key, s_.job_name);
}

Status TaskLoop::WriteResult(const nlohmann::json& result) const { return WriteJsonAtomically(s_.result_path, result); }

JobEvent TaskLoop::Event(JobEvent::Kind kind) const {
  JobEvent e;
  e.kind = kind;
  e.job_type = s_.type->id;
  e.job_name = s_.job_name;
  e.tuning_name = s_.tuning_name;
  e.result_path = s_.result_path;
  e.tasks = s_.tasks;
  e.done = done_;
  e.failed = failed_;
  e.elapsed_s = Elapsed();
  e.best_gain_percent = best_gain_percent_;
  e.task = task_;
  e.task_name = task_name_;
  e.task_op = task_op_;
  return e;
}

void TaskLoop::Emit(const JobEvent& e) const {
  for (const auto& listener : s_.listeners.on_event)
    if (listener) listener(e);
}

void TaskLoop::Log(nlohmann::json line, double elapsed_s) const {
  if (!trials_) return;
  line["elapsed_s"] = elapsed_s;
  std::fprintf(trials_, "%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(trials_);
}

void TaskLoop::JobStarted() {
  const JobEvent e = Event(JobEvent::Kind::kJobStarted);
  nlohmann::json line = s_.about;
  const double unix_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  line.update({{"event", "job_started"}, {"job_type", s_.type->id}, {"job_name", s_.job_name}, {"tuning_name", s_.tuning_name},
               {"tasks", s_.tasks}, {"done", done_}, {"unix_s", unix_s}});
  Log(line, e.elapsed_s);
  Emit(e);
}

void TaskLoop::TaskStarted(size_t index, const std::string& name, const std::string& op) {
  task_ = index;
  task_name_ = name;
  task_op_ = op;
  Emit(Event(JobEvent::Kind::kTaskStarted));
}

void TaskLoop::Trial(const TrialRecord& trial) {
  JobEvent e = Event(JobEvent::Kind::kTrial);
  e.trial = trial;
  nlohmann::json line = trial.ToJson();
  line.update({{"event", "trial"}, {"task", task_}, {"name", task_name_}, {"op", task_op_}});
  Log(line, e.elapsed_s);
  Emit(e);
}

bool TaskLoop::TaskDone(const Bank& bank, const std::string& status, const std::string& failure, double before_us, double after_us,
                        const nlohmann::json& detail) {
  ++done_;
  failed_ += status == "failed";
  if ((status == "add" || status == "update") && before_us > 0 && after_us > 0)
    best_gain_percent_ = std::max(best_gain_percent_, (before_us - after_us) / before_us * 100);
  JobEvent e = Event(JobEvent::Kind::kTaskDone);
  e.status = status;
  e.failure = failure;
  e.before_us = before_us;
  e.after_us = after_us;
  Log({{"event", "task_done"}, {"task", task_}, {"name", task_name_}, {"op", task_op_}, {"status", status}, {"before_us", before_us},
       {"after_us", after_us}, {"failure", failure}, {"detail", detail}},
      e.elapsed_s);
  Emit(e);
  if (s_.on_task_done) s_.on_task_done(bank, done_, failed_);
  // Tests stop the job here, as a kill after a task would.
  if (const char* stop = std::getenv("TILEBANK_TEST_EXIT_AFTER_TASKS"); stop && std::atoi(stop) == static_cast<int>(done_)) std::_Exit(137);
  return s_.listeners.stop && s_.listeners.stop();
}

void TaskLoop::JobDone(bool stopped) {
  JobEvent e = Event(JobEvent::Kind::kJobDone);
  e.stopped = stopped;
  Log({{"event", "job_done"}, {"done", done_}, {"failed", failed_}, {"stopped", stopped}}, e.elapsed_s);
  Emit(e);
}

}  // namespace tilebank::engine
