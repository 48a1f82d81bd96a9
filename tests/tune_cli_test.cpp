// `tilebank tune -j 2` end to end: the result file, bank writes, hits on a second run,
// --repeat-tune, --tune-ops-file, bad input, and resuming a killed run with --reload.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const char* kTuneOps = R"([
 {"op":"MatMul","name":"mm","input_desc":[{"shape":[32,48],"type":"float32"},{"shape":[48,64],"type":"float32"}],"output_desc":[{"shape":[32,64],"type":"float32"}]},
 {"op":"Relu","name":"relu","input_desc":[{"shape":[64,256],"type":"float32"}],"output_desc":[{"shape":[64,256],"type":"float32"}]},
 {"op":"Softmax","name":"sm","input_desc":[{"shape":[16,128],"type":"float32"}],"output_desc":[{"shape":[16,128],"type":"float32"}]}
])";

std::vector<std::string> ResultFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("aoe_result_opat_", 0) == 0 && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json Opat(const std::string& file) { return nlohmann::json::parse(ReadFile(file)).at(1).at("OPAT"); }

TEST_CASE("tune: result file, bank entries, then hits, and --repeat-tune tunes again" * doctest::test_suite("measured")) {
  // The templates' defaults are the baseline (the built-in oneDNN choice is often not beaten in 6
  // trials), and a run that stores nothing is tried again in a fresh bank, up to 3 times.
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  TempDir root;
  std::string common, out;
  std::vector<std::string> files;
  nlohmann::json result;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    out = root / ("attempt" + std::to_string(attempt));
    std::filesystem::create_directories(out);
    WriteFile(out + "/ops.json", kTuneOps);
    common = "tune -j 2 --singleop " + out + "/ops.json --bank " + out + "/bank --output " + out + " --trials 6";
    auto first = RunCli(common, env);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    CHECK(first.out.find("ops process finished. Performance improved by") != std::string::npos);
    files = ResultFiles(out);
    REQUIRE(files.size() == 1);
    result = nlohmann::json::parse(ReadFile(files[0]));
    if (result.at(1).at("OPAT").at("repo_summary").at("repo_add_num").get<int>() >= 1) break;
  }
  CHECK(result.at(0).at("basic").at("tuning_name") == "ops");
  CHECK(result.at(0).at("basic").contains("tuning_time(s)"));
  auto opat = result.at(1).at("OPAT");
  for (const char* field : {"model_baseline_performance(ms)", "model_performance_improvement", "model_result_performance(ms)",
                            "opat_tuning_result", "repo_modified_operators", "repo_summary"})
    CHECK_MESSAGE(opat.contains(field), field);
  CHECK(opat["opat_tuning_result"] == "tuning successful");
  auto summary = opat["repo_summary"];
  CHECK(summary["total_num"] == 3);
  CHECK(summary["repo_add_num"].get<int>() + summary["repo_unsatisfied_num"].get<int>() == 3);
  // What the test is about must have happened: some operator's default was beaten and stored.
  REQUIRE_MESSAGE(summary["repo_add_num"].get<int>() >= 1, "no operator was added: the checks below would check nothing");
  REQUIRE(opat["repo_modified_operators"].size() == summary["repo_add_num"].get<size_t>());
  for (const auto& m : opat["repo_modified_operators"]) {
    auto perf = m.at("tune_performance");
    REQUIRE(perf.size() == 1);
    auto mode = perf.begin().key();
    CHECK((mode == "Schedule" || mode == "Format" || mode == "Impl"));
    CHECK(perf.begin().value().at("update_mode") == "add");
    CHECK(perf.begin().value().at("performance_after_tune(us)").get<double>() < perf.begin().value().at("performance_before_tune(us)").get<double>());
  }
  int added = summary["repo_add_num"];
  auto stats = RunCli("bank stats --json --bank " + out + "/bank");
  REQUIRE(stats.exit_code == 0);
  CHECK(stats.out.find("\"op\": " + std::to_string(added)) != std::string::npos);
  CHECK(RunCli("bank validate --bank " + out + "/bank").exit_code == 0);

  // Again: what was added is a hit and is not tuned; the rest (whose default was not beaten) is
  // tuned again, and measurement noise may now let it beat the default.
  auto second = RunCli(common, env);
  REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  files = ResultFiles(out);
  REQUIRE(files.size() == 2);
  auto again = Opat(files[1])["repo_summary"];
  CHECK(again["repo_hit_num"] == added);
  CHECK(again["repo_add_num"].get<int>() + again["repo_unsatisfied_num"].get<int>() == 3 - added);
  const int stored = added + again["repo_add_num"].get<int>();

  // REPEAT_TUNE=True: the bank's entries are tuned again (reserved or update, never hit).
  setenv("REPEAT_TUNE", "True", 1);
  auto third = RunCli(common, env);
  unsetenv("REPEAT_TUNE");
  REQUIRE_MESSAGE(third.exit_code == 0, third.err);
  files = ResultFiles(out);
  REQUIRE(files.size() == 3);
  auto repeat = Opat(files[2])["repo_summary"];
  CHECK(repeat["repo_hit_num"] == 0);
  CHECK(repeat["repo_reserved_num"].get<int>() + repeat["repo_update_num"].get<int>() == stored);
}

TEST_CASE("tune: --tune-ops-file picks operators by name and type") {
  TempDir dir;
  WriteFile(dir / "ops.json", kTuneOps);
  WriteFile(dir / "filter.json", R"({"tune_ops_name": ["mm"], "tune_ops_type": ["SoftmaxV2"]})");
  // The --output directory need not exist yet.
  auto r = RunCli("tune --job_type=2 --singleop " + (dir / "ops.json") + " --bank " + (dir / "bank") + " --output " + (dir / "new/results") +
                  " --trials 4 --tune_ops_file " + (dir / "filter.json"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto files = ResultFiles(dir / "new/results");
  REQUIRE(files.size() == 1);
  CHECK(Opat(files[0])["repo_summary"]["total_num"] == 2);
}

TEST_CASE("tune: bad input is refused with exit 2 and no result file") {
  TempDir dir;
  WriteFile(dir / "ops.json", kTuneOps);
  WriteFile(dir / "bad.json", R"([{"op":"MatMul","input_desc":[{"shape":[2,3],"type":"float32"}],"output_desc":[{"shape":[2,3],"type":"float32"}]}, )");
  std::string out = " --bank " + (dir / "bank") + " --output " + dir.path();
  CheckRefused(RunCli("tune -j 3 --singleop " + (dir / "ops.json") + out), "--job-type must be 2 (OPAT), 1 (SGAT) or 4 (GDAT), not 3");
  CheckRefused(RunCli("tune -j 2" + out), "--job-type 2 (OPAT) takes one input: --model M.onnx or --singleop OPS.json");
  // Each job type's inputs and options come from its entry in engine/jobs/job_types.h.
  CheckRefused(RunCli("tune -j 2 --subgraphs " + (dir / "ops.json") + out), "--subgraphs is not for --job-type 2 (OPAT): it is for --job-type 1 (SGAT)");
  CheckRefused(RunCli("tune -j 1 --singleop " + (dir / "ops.json") + " --tune-mode GA" + out), "--singleop is not for --job-type 1 (SGAT)");
  CheckRefused(RunCli("tune -j 1 --model m.onnx --modes impl" + out), "--modes is not for --job-type 1 (SGAT): it is for --job-type 2 (OPAT)");
  CheckRefused(RunCli("tune -j 4 --reload x" + out), "--job-type 4 (GDAT) plans in one step");
  CheckRefused(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --model m.onnx" + out), "takes one input");
  CheckRefused(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --input-shape x:1,2" + out), "--input-shape is for a model");
  auto malformed = RunCli("tune -j 2 --singleop " + (dir / "bad.json") + out);
  CHECK(malformed.exit_code == 2);
  CHECK(malformed.err.find("bad.json") != std::string::npos);
  CheckRefused(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + out + " --tune-mode XYZ"), "--tune-mode XYZ");
  CheckRefused(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + out + " --modes schedule,speed"), "unknown mode 'speed'");
  CheckRefused(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + out + " --soc other-soc"), "--soc other-soc: tuning measures this machine");
  CheckRefused(RunCli("tune -j 2 --reload nosuchjob" + out), "--reload");
  // An output directory that cannot be made (under a file): refused before the bank is created.
  auto unwritable = RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --bank " + (dir / "bank") + " --output " + (dir / "ops.json/results"));
  CHECK(unwritable.exit_code == 2);
  CHECK(unwritable.err.find("output directory") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bank"));
  CHECK(ResultFiles(dir.path()).empty());
}

TEST_CASE("tune: every operator is checked before a bank or a result file exists (exit 2, file, op and field named)") {
  struct Case {
    const char* name;
    const char* ops;
    std::vector<std::string> words;  // the message names these
  };
  const std::string relu = R"({"op":"Relu","name":"ok","input_desc":[{"shape":[4,8],"type":"float32"}],"output_desc":[{"shape":[4,8],"type":"float32"}]})";
  const std::vector<Case> cases = {
      {"huge", R"({"op":"MatMul","name":"huge","input_desc":[{"shape":[1000000,1000000],"type":"float32"},{"shape":[1000000,1000000],"type":"float32"}],"output_desc":[{"shape":[1000000,1000000],"type":"float32"}]})",
       {"op 1 (huge, MatMul)", "GiB", "available"}},
      {"inner", R"({"op":"MatMul","name":"mm","input_desc":[{"shape":[4,8],"type":"float32"},{"shape":[9,4],"type":"float32"}],"output_desc":[{"shape":[4,4],"type":"float32"}]})",
       {"op 1 (mm, MatMul)", "input_desc[1].shape [9,4]", "inner dimensions"}},
      {"unknown", R"({"op":"NonMaxSuppression","name":"nms","input_desc":[{"shape":[4,8],"type":"float32"}],"output_desc":[{"shape":[4,8],"type":"float32"}]})",
       {"op 1 (nms, NonMaxSuppression)", "\"op\"", "supported: ", "MatMul"}},
      {"group", R"({"op":"Conv","name":"conv","input_desc":[{"shape":[1,6,8,8],"type":"float32"},{"shape":[4,4,3,3],"type":"float32"}],"output_desc":[{"shape":[1,4,6,6],"type":"float32"}],"attr":[{"name":"group","type":"int","value":2}]})",
       {"op 1 (conv, Conv)", "attr group 2", "input_desc[1]"}},
      {"broadcast", R"({"op":"Add","name":"add","input_desc":[{"shape":[4,8],"type":"float32"},{"shape":[3],"type":"float32"}],"output_desc":[{"shape":[4,8],"type":"float32"}]})",
       {"op 1 (add, Add)", "input_desc", "broadcast"}},
      {"declared_output", R"({"op":"Softmax","name":"sm","input_desc":[{"shape":[4,8],"type":"float32"}],"output_desc":[{"shape":[4,9],"type":"float32"}]})",
       {"op 1 (sm, Softmax)", "output_desc[0].shape"}},
      {"overflow", R"({"op":"Relu","name":"big","input_desc":[{"shape":[100000000000,100000000000],"type":"float32"}],"output_desc":[{"shape":[100000000000,100000000000],"type":"float32"}]})",
       {"op 1 (big, Relu)", "input_desc[0].shape", "2^48"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TempDir dir;
    const std::string file = dir / (std::string(c.name) + ".json");
    WriteFile(file, "[" + relu + ",\n" + c.ops + "]");
    auto r = RunCli("tune -j 2 --singleop " + file + " --bank " + (dir / "bank") + " --output " + (dir / "results"));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(file) != std::string::npos, r.err);
    for (const std::string& w : c.words) CHECK_MESSAGE(r.err.find(w) != std::string::npos, std::string(w + " in: " + r.err));
    CHECK(!std::filesystem::exists(dir / "bank"));
    CHECK(!std::filesystem::exists(dir / "results"));
    CHECK(ResultFiles(dir.path()).empty());
  }
}

TEST_CASE("tune: an operator that fails is listed and the others are still tuned") {
  TempDir dir;
  WriteFile(dir / "ops.json", R"([
   {"op":"Relu","name":"good","input_desc":[{"shape":[8,32],"type":"float32"}],"output_desc":[{"shape":[8,32],"type":"float32"}]},
   {"op":"MatMul","name":"mismatch","input_desc":[{"shape":[4,5],"type":"float32"},{"shape":[5,7],"type":"float32"}],"output_desc":[{"shape":[4,7],"type":"float32"}]}])");
  auto r = RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --bank " + (dir / "bank") + " --output " + dir.path() + " --trials 4",
                  "TILEBANK_TEST_FAIL_OPS=mismatch");
  CHECK(r.exit_code == 1);
  auto files = ResultFiles(dir.path());
  REQUIRE(files.size() == 1);
  auto opat = Opat(files[0]);
  CHECK(opat["opat_tuning_result"] == "tuning failed");
  CHECK(opat["tuning_failed_operators"] == nlohmann::json::array({"mismatch"}));
  CHECK(opat["repo_summary"]["total_num"] == 2);
}

TEST_CASE("tune: a run killed midway resumes with --reload without redoing finished operators") {
  TempDir dir;
  WriteFile(dir / "ops.json", kTuneOps);
  int pid = SpawnCli({"tune", "-j", "2", "--singleop", dir / "ops.json", "--bank", dir / "bank", "--output", dir.path(), "--trials", "10"});
  // Wait until the first operator is checkpointed, then kill the run.
  bool checkpointed = false;
  for (int i = 0; i < 600 && !checkpointed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto files = ResultFiles(dir.path());
    if (files.empty()) continue;
    auto text = ReadFile(files[0]);
    auto j = nlohmann::json::parse(text, nullptr, false);
    checkpointed = !j.is_discarded() && j.size() > 1 && j[1]["OPAT"]["repo_summary"]["total_num"].get<int>() >= 1;
  }
  REQUIRE(checkpointed);
  kill(pid, SIGKILL);
  WaitChild(pid);
  auto files = ResultFiles(dir.path());
  REQUIRE(files.size() == 1);
  auto partial = Opat(files[0]);
  // Each operator compiles and measures candidates for far longer than the 50 ms between looks.
  const int finished = partial["repo_summary"]["total_num"];
  REQUIRE_MESSAGE(finished < 3, "the run finished before the kill: the test did not kill it midway");
  CHECK(partial["opat_tuning_result"] == "tune tuning incomplete");
  auto log_before = RunCli("bank export --bank " + (dir / "bank") + " -o " + (dir / "before.jsonl"));
  REQUIRE(log_before.exit_code == 0);

  auto resumed = RunCli("tune -j 2 --reload --bank " + (dir / "bank") + " --output " + dir.path() + " --trials 10");
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  REQUIRE(ResultFiles(dir.path()).size() == 1);  // the same result file, completed
  auto done = Opat(files[0]);
  CHECK(done["opat_tuning_result"] == "tuning successful");
  CHECK(done["repo_summary"]["total_num"] == 3);
  CHECK(done["repo_summary"]["repo_hit_num"] == 0);  // finished operators were not looked at again
  // Entries written before the kill are untouched (same revision and time).
  auto before = ReadFile(dir / "before.jsonl");
  REQUIRE(RunCli("bank export --bank " + (dir / "bank") + " -o " + (dir / "after.jsonl")).exit_code == 0);
  auto after = ReadFile(dir / "after.jsonl");
  size_t pos = before.find('\n');
  for (size_t next; (next = before.find('\n', pos + 1)) != std::string::npos; pos = next)
    CHECK(after.find(before.substr(pos + 1, next - pos - 1)) != std::string::npos);
  // A finished job is not resumed again.
  CheckRefused(RunCli("tune -j 2 --reload --bank " + (dir / "bank") + " --output " + dir.path()), "already finished");
}

}  // namespace
}  // namespace tilebank::testing
