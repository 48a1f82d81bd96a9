// The task loop every job runs: its events in order, the trials file beside the result file, the
// checkpoint under the job's name and its type's latest pointer, a listener stopping the job, and
// the progress line's plain form.
#include "engine/jobs/task_loop.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <vector>

#include "engine/jobs/progress_line.h"
#include "engine/jobs/stored_job.h"
#include "repo/bank.h"
#include "tests/test_support.h"

namespace tilebank::engine {
namespace {

using testing::ReadFile;
using testing::TempDir;

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_CASE("job types: one table for the CLI and batches") {
  CHECK(JobTypeChoices() == "2 (OPAT), 1 (SGAT) or 4 (GDAT)");
  REQUIRE(FindJobType(4) != nullptr);
  CHECK(std::string(FindJobType(4)->result_kind) == "gdat");
  CHECK(FindJobType(3) == nullptr);
  CHECK(JobTypeOfResultKind("sgat") == FindJobType(1));
  CHECK(TrialsPathOf("out/aoe_result_opat_1_2.json") == "out/aoe_trials_opat_1_2.jsonl");
  CHECK(TrialsPathOf("x/y.json") == "x/y.trials.jsonl");
}

TEST_CASE("task loop: events in order, the trials file, the checkpoint, a listener stopping the job") {
  TempDir dir;
  auto bank = Bank::Open(dir / "bank", {OpenMode::kCreateIfMissing, "test_soc", "fp"});
  REQUIRE(bank.ok());
  std::vector<std::string> kinds;
  bool stop = false;
  TaskLoopSetup setup;
  setup.type = &JobTypeOf(2);
  setup.job_name = "opat_test";
  setup.tuning_name = "ops";
  setup.result_path = dir / "aoe_result_opat_test.json";
  setup.tasks = 3;
  setup.elapsed_before_s = 10;  // an earlier run
  setup.done_before = 1;
  setup.listeners.on_event.push_back([&](const JobEvent& e) { kinds.push_back(JobEventKindName(e.kind)); });
  setup.listeners.stop = [&] { return stop; };
  size_t hook_done = 0, hook_failed = 0;
  setup.on_task_done = [&](const Bank&, size_t done, size_t failed) { hook_done = done, hook_failed = failed; };
  setup.about = {{"soc_version", "test_soc"}};
  TaskLoop loop(setup);
  CHECK(loop.Elapsed() >= 10);
  REQUIRE((*bank)->Write([&](WriteTxn& txn) { return loop.PutCheckpoint(txn, "{\"n\":1}"); }).ok());
  loop.JobStarted();
  loop.TaskStarted(1, "conv1", "Conv");
  TrialRecord t;
  t.trial = 1;
  t.budget = 2;
  t.policy = "tile_m=32";
  t.time_us = 12.5;
  t.verdict = "ok";
  loop.Trial(t);
  t.trial = 2;
  t.verdict = "wrong result: max error 1";
  loop.Trial(t);
  CHECK_FALSE(loop.TaskDone(**bank, "failed", "no candidate ran correctly", 0, 0));
  CHECK(hook_done == 2);
  CHECK(hook_failed == 1);
  stop = true;
  loop.TaskStarted(2, "relu", "Relu");
  CHECK(loop.TaskDone(**bank, "add", "", 20, 10, {{"template", "x"}}));  // asked to stop
  loop.JobDone(true);
  CHECK(kinds == std::vector<std::string>{"job_started", "task_started", "trial", "trial", "task_done", "task_started", "task_done", "job_done"});

  const auto lines = Lines(dir / "aoe_trials_opat_test.jsonl");
  REQUIRE(lines.size() == 6);  // task_started is not logged
  CHECK(lines[0]["event"] == "job_started");
  CHECK(lines[0]["soc_version"] == "test_soc");
  CHECK(lines[0]["done"] == 1);
  CHECK(lines[1]["event"] == "trial");
  CHECK(lines[1]["name"] == "conv1");
  CHECK(lines[1]["policy"] == "tile_m=32");
  CHECK(lines[2]["verdict"] == "wrong result: max error 1");
  CHECK(lines[4]["status"] == "add");
  CHECK(lines[4]["detail"]["template"] == "x");
  CHECK(lines[5]["stopped"] == true);
  CHECK(lines[5]["failed"] == 1);

  auto latest = PeekLatestJob(**bank, JobTypeOf(2).latest_key);
  REQUIRE(latest.ok());
  REQUIRE(latest->has_value());
  CHECK((*latest)->first == "opat_test");
  CHECK((*latest)->second == "{\"n\":1}");
}

TEST_CASE("progress: a plain line per task done, the estimate from this run's pace, nothing when quiet") {
  CHECK(ProgressListener(ProgressStyle::kQuiet) == nullptr);
  CHECK(ClockText(65) == "1:05");
  CHECK(ClockText(3725) == "1:02:05");
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  auto listener = ProgressListener(ProgressStyle::kPlain, out);
  JobEvent e;
  e.job_type = 1;
  e.tuning_name = "resnet";
  e.tasks = 4;
  listener(e);  // job started
  e.kind = JobEvent::Kind::kTaskDone;
  e.done = 1;
  e.elapsed_s = 30;
  e.task_name = "conv1";
  e.task_op = "Conv+Relu";
  e.status = "add";
  e.before_us = 100;
  e.after_us = 80;
  listener(e);
  e.kind = JobEvent::Kind::kJobDone;
  e.stopped = true;
  listener(e);
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  CHECK(text.find("[SGAT resnet] 1/4 conv1 (Conv+Relu): add  100.00 us -> 80.00 us  (0:30 elapsed, ~1:30 left)") != std::string::npos);
  CHECK(text.find("stopped: --reload goes on") != std::string::npos);
}

TEST_CASE("progress: on a terminal one line rewritten in place, closed when the job ends") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  auto listener = ProgressListener(ProgressStyle::kLive, out);
  JobEvent e;
  e.job_type = 2;
  e.tuning_name = "ops";
  e.tasks = 3;
  listener(e);
  e.kind = JobEvent::Kind::kTrial;
  e.task_name = "mm";
  e.task_op = "MatMul";
  e.trial.trial = 4;
  e.trial.budget = 24;
  listener(e);
  e.kind = JobEvent::Kind::kTaskDone;
  e.done = 1;
  e.elapsed_s = 10;
  e.best_gain_percent = 12.5;
  listener(e);
  e.kind = JobEvent::Kind::kJobDone;
  listener(e);
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  CHECK(text.find("\r\033[K[OPAT ops] 0/3 | mm (MatMul) trial 4/24") != std::string::npos);
  CHECK(text.find("[OPAT ops] 1/3 | mm (MatMul) | best +12.5% | 0:10 elapsed, ~0:20 left") != std::string::npos);
  CHECK(text.find('\n') == text.size() - 1);  // one line, ended once
}

}  // namespace
}  // namespace tilebank::engine
