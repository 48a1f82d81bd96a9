// Batch tuning from the command line without a cluster: `batch plan`, one `tune --shard` process
// per shard, `batch status`, `batch merge` (idempotent, the same bank as one process gets), a
// worker started again on a finished shard, and the refusals (another soc_version's shard, an
// edited plan, a wrong --shard). Slurm and mpirun run the same commands in tests/batch_cluster_test.py.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <functional>
#include <set>

#include "engine/core/soc_version.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const char* kOps = R"([
 {"op":"MatMul","name":"mm","input_desc":[{"shape":[32,48],"type":"float32"},{"shape":[48,64],"type":"float32"}],"output_desc":[{"shape":[32,64],"type":"float32"}]},
 {"op":"MatMul","name":"mm2","input_desc":[{"shape":[16,32],"type":"float32"},{"shape":[32,16],"type":"float32"}],"output_desc":[{"shape":[16,16],"type":"float32"}]},
 {"op":"Relu","name":"relu","input_desc":[{"shape":[64,256],"type":"float32"}],"output_desc":[{"shape":[64,256],"type":"float32"}]},
 {"op":"Softmax","name":"sm","input_desc":[{"shape":[16,128],"type":"float32"}],"output_desc":[{"shape":[16,128],"type":"float32"}]},
 {"op":"Relu","name":"relu_again","input_desc":[{"shape":[64,256],"type":"float32"}],"output_desc":[{"shape":[64,256],"type":"float32"}]}
])";

// The op keys of a bank, from its export.
std::set<std::string> ExportedKeys(const std::string& export_path) {
  std::set<std::string> keys;
  std::istringstream lines(ReadFile(export_path));
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line))
    if (!line.empty()) keys.insert(nlohmann::json::parse(line).at("key").get<std::string>());
  return keys;
}

nlohmann::json StatusJson(const std::string& plan, const std::string& root) {
  auto r = RunCli("batch status " + plan + " " + root + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

TEST_CASE("batch: shards tuned by separate workers merge into the bank one process gets, status, result file, idempotent merge") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  const std::string soc = HostSocVersion(), plan = dir / "plan.json", root = dir / "root";
  auto planned = RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 3 --trials 3 -o " + plan);
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.err);
  CHECK(planned.out.find("4 tasks (operators), 3 shards") != std::string::npos);  // the two identical Relus are one task

  auto before = StatusJson(plan, root);
  CHECK(before["total"]["left"] == 4);
  CHECK(before["total"]["states"]["waiting"] == 3);

  for (int s = 0; s < 3; ++s) {
    auto worker = RunCli("tune --plan " + plan + " --shard " + std::to_string(s) + " --bank " + root);
    REQUIRE_MESSAGE(worker.exit_code == 0, worker.err);
    CHECK(std::filesystem::exists(root + "/shards/" + std::to_string(s) + "/" + soc));
  }
  // A worker started again on a finished shard (a requeue after the end) tunes nothing.
  auto again = RunCli("tune -j 2 --plan " + plan + " --shard 1/3 --bank " + root);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out.find("finished earlier: nothing tuned") != std::string::npos);
  // One killed after its last checkpoint, before its result file's last rewrite, left the file
  // "incomplete": the next worker on the shard writes it again from the checkpoint.
  std::string shard_result;
  for (const auto& f : std::filesystem::directory_iterator(root + "/shards/1"))
    if (f.path().filename().string().rfind("aoe_result_opat_", 0) == 0) shard_result = f.path().string();
  REQUIRE(!shard_result.empty());
  const std::string finished_text = ReadFile(shard_result);
  auto stale = nlohmann::json::parse(finished_text);
  stale[1]["OPAT"]["opat_tuning_result"] = "tune tuning incomplete";
  stale[0]["basic"].erase("tuning_time(s)");  // as a job's file reads before it finishes
  WriteFile(shard_result, stale.dump());
  REQUIRE(RunCli("tune --plan " + plan + " --shard 1 --bank " + root).exit_code == 0);
  CHECK(nlohmann::json::parse(ReadFile(shard_result))[1]["OPAT"]["opat_tuning_result"] == "tuning successful");
  CHECK(nlohmann::json::parse(ReadFile(shard_result))[0]["basic"].contains("tuning_time(s)"));

  auto after = StatusJson(plan, root);
  CHECK(after["total"]["done"] == 4);
  CHECK(after["total"]["left"] == 0);
  CHECK(after["total"]["states"]["done"] == 3);
  // Status reads the counts each worker writes to state.json, not the shard banks (which a worker
  // on another host may be writing): with the banks moved away, it says the same.
  std::filesystem::rename(root + "/shards", dir / "shards_away");
  std::filesystem::create_directories(root + "/shards");
  for (int s = 0; s < 3; ++s) {
    std::filesystem::create_directories(root + "/shards/" + std::to_string(s));
    std::filesystem::copy_file(dir / "shards_away" + "/" + std::to_string(s) + "/state.json", root + "/shards/" + std::to_string(s) + "/state.json");
  }
  CHECK(StatusJson(plan, root)["total"] == after["total"]);
  std::filesystem::remove_all(root + "/shards");
  std::filesystem::rename(dir / "shards_away", root + "/shards");

  auto merged = RunCli("batch merge " + plan + " " + root);
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  const auto plan_id = nlohmann::json::parse(ReadFile(plan)).at("plan_id").get<std::string>();
  const auto result = nlohmann::json::parse(ReadFile(root + "/aoe_result_opat_batch_" + plan_id + ".json"));
  CHECK(result.at(1).at("OPAT").at("repo_summary").at("total_num") == 4);
  CHECK(result.at(1).at("OPAT").at("opat_tuning_result") == "tuning successful");
  REQUIRE(RunCli("bank export --bank " + root + " --soc " + soc + " -o " + (dir / "a.jsonl")).exit_code == 0);
  // Every task has an entry (its winner or its built-in choice), whichever shard tuned it.
  CHECK(ExportedKeys(dir / "a.jsonl").size() == 4);
  // The next plan of these tasks is calibrated by what they took: each costs its measured seconds.
  const std::string result_path = root + "/aoe_result_opat_batch_" + plan_id + ".json";
  auto calibrated = RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 3 --trials 3 --calibrate " + result_path + " -o " +
                           (dir / "calibrated.json"));
  REQUIRE_MESSAGE(calibrated.exit_code == 0, calibrated.err);
  CHECK(calibrated.out.find("calibrated: 4 tasks") != std::string::npos);
  const auto measured = result.at(0).at("basic").at("batch").at("task_seconds");
  const auto calibrated_tasks = nlohmann::json::parse(ReadFile(dir / "calibrated.json"))["tasks"];
  REQUIRE(calibrated_tasks.size() == 4);
  for (const auto& task : calibrated_tasks)
    CHECK(task["cost_s"].get<double>() == doctest::Approx(measured.at(task["key"].get<std::string>()).get<double>()));
  CheckRefusedWritingNothing(RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --calibrate " + plan + " -o " + (dir / "c2.json")),
                             "not a batch's result file", {dir / "c2.json"});
  CHECK(RunCli("bank validate --bank " + root + " --soc " + soc).exit_code == 0);

  // Merging again changes nothing, byte for byte.
  REQUIRE(RunCli("batch merge " + plan + " " + root).exit_code == 0);
  REQUIRE(RunCli("bank export --bank " + root + " --soc " + soc + " -o " + (dir / "b.jsonl")).exit_code == 0);
  CHECK(ReadFile(dir / "a.jsonl") == ReadFile(dir / "b.jsonl"));
  // The shards merged in the other order give the same entries.
  std::string reversed;
  for (int s = 2; s >= 0; --s) reversed += root + "/shards/" + std::to_string(s) + "/" + soc + " ";
  REQUIRE(RunCli("bank merge " + reversed + "--into " + (dir / "reversed") + " --soc " + soc).exit_code == 0);
  REQUIRE(RunCli("bank export --bank " + (dir / "reversed") + " --soc " + soc + " -o " + (dir / "c.jsonl")).exit_code == 0);
  CHECK(ExportedKeys(dir / "c.jsonl") == ExportedKeys(dir / "a.jsonl"));

  // One process from the same inputs (the whole batch, then its merge) gets the same keys.
  auto single = RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --shard 0/1 --trials 3 --bank " + (dir / "single"));
  REQUIRE_MESSAGE(single.exit_code == 0, single.err);
  auto single_merge = RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --trials 3 --bank " + (dir / "single") + " --plan " + plan);
  CHECK(single_merge.exit_code == 2);  // --plan holds the inputs: both refused
  REQUIRE(RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 1 --trials 3 -o " + (dir / "plan1.json")).exit_code == 0);
  REQUIRE(RunCli("batch merge " + (dir / "plan1.json") + " " + (dir / "single")).exit_code == 0);
  REQUIRE(RunCli("bank export --bank " + (dir / "single") + " --soc " + soc + " -o " + (dir / "d.jsonl")).exit_code == 0);
  CHECK(ExportedKeys(dir / "d.jsonl") == ExportedKeys(dir / "a.jsonl"));
}

TEST_CASE("batch: a shard whose bank creation was interrupted reads as not started, and its next worker tunes it") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  const std::string soc = HostSocVersion(), plan = dir / "plan.json", root = dir / "root";
  REQUIRE(RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 2 --trials 2 -o " + plan).exit_code == 0);
  std::filesystem::create_directories(root + "/shards/0/" + soc);
  WriteFile(root + "/shards/0/" + soc + "/data.mdb", "");  // killed before LMDB wrote anything
  auto status = StatusJson(plan, root);
  CHECK(status["shards"][0]["state"] == "waiting");
  auto worker = RunCli("tune --plan " + plan + " --shard 0 --bank " + root);
  REQUIRE_MESSAGE(worker.exit_code == 0, worker.err);
  CHECK(StatusJson(plan, root)["shards"][0]["state"] == "done");
  // A bank root that does not exist: status says so beside the waiting shards; merge refuses it.
  auto typo = RunCli("batch status " + plan + " " + (dir / "typo"));
  CHECK(typo.exit_code == 0);
  CHECK(typo.err.find("does not exist yet") != std::string::npos);
  CheckRefusedWritingNothing(RunCli("batch merge " + plan + " " + (dir / "typo")), "no batch under", {dir / "typo"});
}

TEST_CASE("batch: a plan for two soc_versions tunes each group on its own nodes, and merges each into its own bank") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  const std::string soc = HostSocVersion(), other = kTestSoc, plan = dir / "plan.json", root = dir / "root";
  REQUIRE(soc != other);
  auto planned = RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 2 --trials 2 --soc " + soc + "," + other + " -o " + plan);
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.err);
  CHECK(planned.out.find("soc_version " + other + ": shards 2-3") != std::string::npos);
  auto groups = RunCli("batch groups " + plan);
  REQUIRE(groups.exit_code == 0);
  CHECK(groups.out == soc + " 0-1\n" + other + " 2-3\n");

  // The other soc_version's shard, started on this machine, is refused and says so in its state.
  auto wrong = RunCli("tune --plan " + plan + " --shard 2 --bank " + root);
  CHECK(wrong.exit_code == 2);
  CHECK_MESSAGE(wrong.err.find("tunes soc_version " + other + " but this machine is " + soc) != std::string::npos, wrong.err);
  CHECK(!std::filesystem::exists(root + "/shards/2/" + other));
  // Under MPI (one rank here) a launch tunes the group --soc names, then rank 0 merges that group.
  CheckRefusedWritingNothing(RunCli("tune --plan " + plan + " --shard mpi --bank " + root, "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1"),
                             "give --soc with the one this launch tunes", {root + "/" + soc, root + "/shards/0"});
  auto rank = RunCli("tune --plan " + plan + " --shard mpi --soc " + soc + " --bank " + root, "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1");
  REQUIRE_MESSAGE(rank.exit_code == 0, std::string(rank.err + rank.out));
  CHECK(rank.out.find("merged 2 shard banks into " + root + "/" + soc) != std::string::npos);
  CHECK(!std::filesystem::exists(root + "/" + other));

  auto st = StatusJson(plan, root);
  CHECK(st["by_soc_version"][soc]["states"]["done"] == 2);
  CHECK(st["by_soc_version"][soc]["left"] == 0);
  CHECK(st["by_soc_version"][other]["states"]["failed"] == 1);
  CHECK(st["by_soc_version"][other]["states"]["waiting"] == 1);
  CHECK(st["shards"][2]["soc_version"] == other);
  CHECK(st["shards"][2]["message"].get<std::string>().find("this machine is " + soc) != std::string::npos);
  CHECK(st["total"]["tasks"] == 8);  // every task once per soc_version

  // Merging every group: this soc_version's is complete, the other's is named unfinished (exit 1);
  // each has its own bank and result file.
  auto all = RunCli("batch merge " + plan + " " + root);
  CHECK(all.exit_code == 1);
  CHECK_MESSAGE(all.out.find("unfinished shards: 2, 3") != std::string::npos, all.out);
  const auto plan_id = nlohmann::json::parse(ReadFile(plan)).at("plan_id").get<std::string>();
  const auto done = nlohmann::json::parse(ReadFile(root + "/aoe_result_opat_batch_" + plan_id + "_" + soc + ".json"));
  CHECK(done.at(1).at("OPAT").at("opat_tuning_result") == "tuning successful");
  CHECK(done.at(0).at("basic").at("batch").at("soc_version") == soc);
  const auto left = nlohmann::json::parse(ReadFile(root + "/aoe_result_opat_batch_" + plan_id + "_" + other + ".json"));
  CHECK(!left.at(0).at("basic").contains("tuning_time(s)"));  // unfinished, and no task done: no OPAT section yet
  CHECK(left.at(0).at("basic").at("batch").at("tasks_done") == 0);
  REQUIRE(RunCli("bank export --bank " + root + " --soc " + soc + " -o " + (dir / "a.jsonl")).exit_code == 0);
  CHECK(ExportedKeys(dir / "a.jsonl").size() == 4);
  // One group merged alone, or a soc_version the plan lacks.
  CHECK(RunCli("batch merge " + plan + " " + root + " --soc " + soc).exit_code == 0);
  CheckRefusedWritingNothing(RunCli("batch merge " + plan + " " + root + " --soc nosuch_soc"), "does not tune soc_version nosuch_soc",
                             {root + "/nosuch_soc"});
  CheckRefusedWritingNothing(RunCli("tune --plan " + plan + " --bank " + root + " --soc " + soc + "," + other), "a worker tunes one soc_version",
                             {});
}

// Writes data/gradient_profile_resnet18.json changed by `edit` to dir/name.
void WriteProfile(const TempDir& dir, const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  auto profile = nlohmann::json::parse(ReadFile(SourcePath("data/gradient_profile_resnet18.json")));
  edit(profile);
  WriteFile(dir / name, profile.dump());
}

TEST_CASE("batch: gradient fusion problems (-j 4) as batch tasks: planned by shards, resumed, merged, on any machine") {
  TempDir dir;
  WriteProfile(dir, "a.json", [](nlohmann::json&) {});
  WriteProfile(dir, "same.json", [](nlohmann::json& p) { p["model"] = "resnet18_again"; });  // the same problem: one task
  WriteProfile(dir, "w4.json", [](nlohmann::json& p) { p["world_size"] = 4; p["model"] = "resnet18_w4"; });
  WriteProfile(dir, "head.json", [](nlohmann::json& p) {
    p["gradients"] = nlohmann::json(std::vector<nlohmann::json>(p["gradients"].begin(), p["gradients"].begin() + 20));
    p["model"] = "head";
  });
  WriteFile(dir / "list.txt", "a.json\nsame.json\nw4.json\nhead.json\n");
  // The profiles were recorded on machines of another soc_version: planning measures nothing here.
  const std::string soc = kTestSoc, plan = dir / "plan.json", root = dir / "root";
  auto planned = RunCli("batch plan -j 4 --gradients-list " + (dir / "list.txt") + " --shards 2 --soc " + soc + " -o " + plan);
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.err);
  CHECK(planned.out.find("3 tasks (gradient problems), 2 shards") != std::string::npos);
  const auto plan_json = nlohmann::json::parse(ReadFile(plan));
  CHECK(plan_json["version"] == 2);  // job type 4 is not in plan format 1
  CHECK(plan_json["tasks"][0].contains("profile"));  // the plan carries the profiles

  // Shard 0 stopped after its first task (as a kill would), then run again: it goes on.
  const size_t shard0 = plan_json["shard_tasks"][0].size();
  REQUIRE(shard0 == 2);
  auto killed = RunCli("tune --plan " + plan + " --shard 0 --bank " + root, "TILEBANK_TEST_EXIT_AFTER_TASKS=1");
  CHECK(killed.exit_code == 137);
  auto stopped = StatusJson(plan, root);
  CHECK(stopped["shards"][0]["state"] == "stopped");
  CHECK(stopped["shards"][0]["done"] == 1);
  auto resumed = RunCli("tune --plan " + plan + " --shard 0 --bank " + root);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find("resumed from its checkpoint") != std::string::npos);
  REQUIRE(RunCli("tune --plan " + plan + " --shard 1 --bank " + root).exit_code == 0);

  auto merged = RunCli("batch merge " + plan + " " + root);
  REQUIRE_MESSAGE(merged.exit_code == 0, std::string(merged.err + merged.out));
  const auto result = nlohmann::json::parse(ReadFile(root + "/aoe_result_gdat_batch_" + plan_json["plan_id"].get<std::string>() + ".json"));
  const auto& gdat = result.at(1).at("GDAT");
  CHECK(gdat.at("gdat_tuning_result") == "tuning successful");
  CHECK(gdat.at("repo_summary").at("total_num") == 3);
  CHECK(gdat.at("repo_summary").at("repo_add_num") == 3);  // the task resumed after the kill was not planned twice
  CHECK(result.at(0).at("basic").at("batch").at("task_seconds").size() == 3);
  REQUIRE(RunCli("bank export --bank " + root + " --soc " + soc + " -o " + (dir / "batch.jsonl")).exit_code == 0);
  CHECK(ExportedKeys(dir / "batch.jsonl").size() == 3);

  // The same entries as planning each profile with `tune -j 4 --gradients`.
  for (const char* name : {"a.json", "w4.json", "head.json"})
    REQUIRE(RunCli("tune -j 4 --gradients " + (dir / name) + " --soc " + soc + " --bank " + (dir / "one") + " --output " + (dir / "out")).exit_code == 0);
  REQUIRE(RunCli("bank export --bank " + (dir / "one") + " --soc " + soc + " -o " + (dir / "one.jsonl")).exit_code == 0);
  CHECK(ExportedKeys(dir / "one.jsonl") == ExportedKeys(dir / "batch.jsonl"));
  auto diff = RunCli("bank diff " + root + " " + (dir / "one") + " --soc " + soc);
  CHECK_MESSAGE(diff.exit_code == 0, diff.out);  // the same plans, the same predictions

  CheckRefusedWritingNothing(RunCli("batch plan -j 4 --model-list " + (dir / "list.txt") + " -o " + (dir / "p2.json")),
                             "gradient profiles", {dir / "p2.json"});
  CheckRefusedWritingNothing(RunCli("batch plan -j 2 --gradients " + (dir / "a.json") + " -o " + (dir / "p3.json")), "for -j 4",
                             {dir / "p3.json"});
  WriteFile(dir / "bad.txt", "a.json\nmissing.json\n");
  CheckRefusedWritingNothing(RunCli("batch plan -j 4 --gradients-list " + (dir / "bad.txt") + " -o " + (dir / "p4.json")), "missing.json",
                             {dir / "p4.json"});
}

TEST_CASE("batch: a worker with --local-dir tunes in node-local storage and publishes its shard after each task") {
  TempDir dir;
  WriteProfile(dir, "a.json", [](nlohmann::json&) {});
  WriteProfile(dir, "w4.json", [](nlohmann::json& p) { p["world_size"] = 4; });
  WriteProfile(dir, "w8.json", [](nlohmann::json& p) { p["world_size"] = 8; });
  WriteFile(dir / "list.txt", "a.json\nw4.json\nw8.json\n");
  const std::string soc = kTestSoc, plan = dir / "plan.json", root = dir / "shared", node_a = dir / "node_a", node_b = dir / "node_b";
  REQUIRE(RunCli("batch plan -j 4 --gradients-list " + (dir / "list.txt") + " --soc " + soc + " -o " + plan).exit_code == 0);
  const std::string published = root + "/shards/0/" + soc;

  // Killed on node A after its first task: the shared directory holds the bank as it was then,
  // published as a copy (LMDB never opened it there: no lock file).
  auto killed = RunCli("tune --plan " + plan + " --shard 0 --bank " + root + " --local-dir " + node_a, "TILEBANK_TEST_EXIT_AFTER_TASKS=1");
  CHECK(killed.exit_code == 137);
  CHECK(std::filesystem::exists(published + "/data.mdb"));
  CHECK(!std::filesystem::exists(published + "/lock.mdb"));
  CHECK(StatusJson(plan, root)["shards"][0]["done"] == 1);
  // Resumed on node B, from what node A published: the task done is not planned again.
  auto resumed = RunCli("tune --plan " + plan + " --shard 0 --bank " + root + " --local-dir " + node_b);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find("resumed from its checkpoint") != std::string::npos);
  CHECK(!std::filesystem::exists(published + "/lock.mdb"));
  CHECK(!std::filesystem::exists(node_b + "/" + nlohmann::json::parse(ReadFile(plan))["plan_id"].get<std::string>() + "/shards/0"));
  auto merged = RunCli("batch merge " + plan + " " + root);
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.out);
  CHECK(merged.out.find("3 of 3 done") != std::string::npos);
  const auto result = nlohmann::json::parse(ReadFile(root + "/aoe_result_gdat_batch_" + nlohmann::json::parse(ReadFile(plan))["plan_id"].get<std::string>() + ".json"));
  CHECK(result.at(1).at("GDAT").at("repo_summary").at("repo_add_num") == 3);

  // A publish cut off between its renames (the old copy set aside, the new one not yet in place)
  // is completed by the next worker: the set-aside copy goes back.
  std::filesystem::create_directories(root + "/shards/0/.published-old");
  std::filesystem::rename(published, root + "/shards/0/.published-old/" + soc);
  auto again = RunCli("tune --plan " + plan + " --shard 0 --bank " + root + " --local-dir " + node_a);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out.find("finished earlier: nothing tuned") != std::string::npos);
  CHECK(std::filesystem::exists(published + "/data.mdb"));
  CheckRefusedWritingNothing(RunCli("tune -j 4 --gradients " + (dir / "a.json") + " --local-dir " + node_a + " --bank " + (dir / "x")),
                             "--local-dir is for a batch worker", {dir / "x"});
}

TEST_CASE("batch: bad plans, shards and shard banks are refused by name, nothing merged") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  const std::string soc = HostSocVersion(), plan = dir / "plan.json", root = dir / "root";
  REQUIRE(RunCli("batch plan -j 2 --singleop " + (dir / "ops.json") + " --shards 2 --trials 2 -o " + plan).exit_code == 0);

  CheckRefusedWritingNothing(RunCli("tune --plan " + plan + " --shard 2/2 --bank " + root), "0 <= I < N", {root});
  CheckRefusedWritingNothing(RunCli("tune --plan " + plan + " --shard 5 --bank " + root), "the plan has shards 0 to 1", {root});
  CheckRefusedWritingNothing(RunCli("tune --plan " + plan + " --shard 0/3 --bank " + root), "the plan has 2 shards", {root});
  CheckRefusedWritingNothing(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --shard 1 --bank " + root), "expected I/N", {root});
  CheckRefusedWritingNothing(RunCli("tune -j 1 --plan " + plan + " --shard 0 --bank " + root), "is for job type 2", {root});
  CheckRefusedWritingNothing(RunCli("tune -j 2 --singleop " + (dir / "ops.json") + " --shard mpi --bank " + root), "no MPI rank", {root});

  auto text = nlohmann::json::parse(ReadFile(plan));
  text["trials"] = 50;  // edited by hand: its plan_id no longer matches
  WriteFile(dir / "edited.json", text.dump());
  CheckRefusedWritingNothing(RunCli("batch merge " + (dir / "edited.json") + " " + root), "plan_id", {root});

  // A shard holding a bank of another soc_version refuses the whole merge, naming it.
  REQUIRE(RunCli("tune --plan " + plan + " --shard 0 --bank " + root).exit_code == 0);
  CreateBank(root + "/shards/1/" + kTestSoc);
  auto refused = RunCli("batch merge " + plan + " " + root);
  CheckRefusedWritingNothing(refused, kTestSoc, {root + "/" + soc});
  CHECK(refused.err.find("shard 1") != std::string::npos);
}

}  // namespace
}  // namespace tilebank::testing
