// Batch plans: the same inputs give the same plan, shards balance cost (not count), every task is
// in exactly one shard, and a plan file that was edited, truncated or is newer is refused.
#include "engine/batch/batch_plan.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <numeric>

#include "engine/core/soc_version.h"
#include "base/json_text.h"
#include "tests/test_support.h"

namespace tilebank::engine {
namespace {

using testing::TempDir;
using testing::WriteFile;

double Makespan(const std::vector<std::vector<size_t>>& shards, const std::vector<double>& costs) {
  double longest = 0;
  for (const auto& s : shards) {
    double load = 0;
    for (size_t t : s) load += costs[t];
    longest = std::max(longest, load);
  }
  return longest;
}

TEST_CASE("batch plan: cost-balanced shards beat count-balanced ones when costs differ") {
  // One long task and ten short ones, in the order a list might give them.
  const std::vector<double> costs = {10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const auto by_cost = CostBalancedShards(costs, 2);
  const auto by_count = CountBalancedShards(costs.size(), 2);
  CHECK(Makespan(by_cost, costs) == doctest::Approx(10));
  CHECK(Makespan(by_count, costs) == doctest::Approx(15));
  for (const auto& shards : {by_cost, by_count}) {
    std::vector<size_t> all;
    for (const auto& s : shards) all.insert(all.end(), s.begin(), s.end());
    std::sort(all.begin(), all.end());
    std::vector<size_t> expected(costs.size());
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(all == expected);
  }
  // More shards than tasks: the extra shards are empty, none is lost.
  CHECK(CostBalancedShards({3, 2}, 4)[2].empty());
}

TEST_CASE("batch plan: measured seconds calibrate the costs: measured tasks cost their time, the rest scale by the median error") {
  std::vector<BatchTask> tasks(4);
  const double estimates[] = {1.0, 2.0, 4.0, 10.0};
  for (size_t i = 0; i < tasks.size(); ++i) {
    tasks[i].key = "k" + std::to_string(i);
    tasks[i].cost_s = estimates[i];
  }
  // k0 took 2x its estimate, k1 3x, k2 4x: the median error is 3x; k3 was never measured.
  const Calibration c = Calibrate({{"k0", 2.0}, {"k1", 6.0}, {"k2", 16.0}, {"other", 1.0}}, &tasks);
  CHECK(c.measured_tasks == 3);
  CHECK(c.scale == doctest::Approx(3.0));
  CHECK(tasks[0].cost_s == 2.0);
  CHECK(tasks[2].cost_s == 16.0);
  CHECK(tasks[3].cost_s == doctest::Approx(30.0));
  // Nothing measured: the estimates stay.
  std::vector<BatchTask> fresh(1);
  fresh[0].key = "x";
  fresh[0].cost_s = 5;
  CHECK(!Calibrate({{"k0", 2.0}}, &fresh).Applied());
  CHECK(fresh[0].cost_s == 5);
}

TEST_CASE("batch plan: --shard I/N and the MPI rank are read, bad ones refused") {
  CHECK(ParseShard("1/4").value() == std::make_pair<size_t, size_t>(1, 4));
  for (const char* bad : {"4/4", "a/b", "-1/2", "1/0", "1", "/", "1/2/3", ""}) CHECK_MESSAGE(!ParseShard(bad).ok(), bad);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  CHECK(ShardFromEnvironment().value() == std::make_pair<size_t, size_t>(1, 2));
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  CHECK(!ShardFromEnvironment().ok());
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
}

const char* kOps = R"([
 {"op":"MatMul","name":"big","input_desc":[{"shape":[256,256],"type":"float32"},{"shape":[256,256],"type":"float32"}],"output_desc":[{"shape":[256,256],"type":"float32"}]},
 {"op":"MatMul","name":"small","input_desc":[{"shape":[8,16],"type":"float32"},{"shape":[16,8],"type":"float32"}],"output_desc":[{"shape":[8,8],"type":"float32"}]},
 {"op":"MatMul","name":"small_again","input_desc":[{"shape":[8,16],"type":"float32"},{"shape":[16,8],"type":"float32"}],"output_desc":[{"shape":[8,8],"type":"float32"}]},
 {"op":"Relu","name":"relu","input_desc":[{"shape":[64,256],"type":"float32"}],"output_desc":[{"shape":[64,256],"type":"float32"}]}
])";

TEST_CASE("batch plan: the same inputs give the same plan, tasks are distinct, the file round-trips and refuses edits") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  BatchInputs in;
  in.job_type = 2;
  in.singleop = dir / "ops.json";
  in.soc_versions = {HostSocVersion()};
  in.trials = 8;
  in.shards = 2;
  auto a = MakeBatchPlan(in);
  auto b = MakeBatchPlan(in);
  REQUIRE_MESSAGE(a.ok(), a.status().message());
  REQUIRE(b.ok());
  CHECK(DumpJson(a->ToJson()) == DumpJson(b->ToJson()));
  CHECK(a->tasks.size() == 3);  // the two identical MatMuls are one task
  CHECK(a->shards() == 2);
  // The big MatMul costs the most and has a shard to itself.
  const auto big = std::find_if(a->tasks.begin(), a->tasks.end(), [](const BatchTask& t) { return t.name == "big"; }) - a->tasks.begin();
  for (const auto& shard : a->shard_tasks)
    if (std::find(shard.begin(), shard.end(), static_cast<size_t>(big)) != shard.end()) CHECK(shard.size() == 1);

  WriteFile(dir / "plan.json", DumpJson(a->ToJson(), 1));
  auto read = ReadBatchPlan(dir / "plan.json");
  REQUIRE_MESSAGE(read.ok(), read.status().message());
  CHECK(DumpJson(read->ToJson()) == DumpJson(a->ToJson()));

  nlohmann::json edited = a->ToJson();
  std::swap(edited["shard_tasks"][0], edited["shard_tasks"][1]);
  WriteFile(dir / "edited.json", DumpJson(edited));
  auto refused = ReadBatchPlan(dir / "edited.json");
  REQUIRE(!refused.ok());
  CHECK(refused.status().message().find("plan_id") != std::string::npos);

  nlohmann::json newer = a->ToJson();
  newer["version"] = kBatchPlanVersion + 1;
  WriteFile(dir / "newer.json", DumpJson(newer));
  auto too_new = ReadBatchPlan(dir / "newer.json");
  REQUIRE(!too_new.ok());
  CHECK(too_new.status().code() == StatusCode::kRefused);

  nlohmann::json lost = a->ToJson();
  lost["shard_tasks"][0] = nlohmann::json::array();
  WriteFile(dir / "lost.json", DumpJson(lost));
  CHECK(!ReadBatchPlan(dir / "lost.json").ok());
  WriteFile(dir / "truncated.json", DumpJson(a->ToJson()).substr(0, 100));
  CHECK(!ReadBatchPlan(dir / "truncated.json").ok());
}

TEST_CASE("batch plan: several soc_versions get a group of shards each, alike, a version 1 plan is still read") {
  TempDir dir;
  WriteFile(dir / "ops.json", kOps);
  BatchInputs in;
  in.job_type = 2;
  in.singleop = dir / "ops.json";
  in.soc_versions = {"soc_a", "soc_b"};
  in.trials = 8;
  in.shards = 2;
  auto mixed = MakeBatchPlan(in);
  REQUIRE_MESSAGE(mixed.ok(), mixed.status().message());
  CHECK(mixed->shards() == 4);
  CHECK(mixed->GroupShards() == 2);
  CHECK(mixed->ShardsOf("soc_a") == std::vector<size_t>{0, 1});
  CHECK(mixed->ShardsOf("soc_b") == std::vector<size_t>{2, 3});
  CHECK(mixed->ShardsOf("soc_c").empty());
  CHECK(mixed->SocOf(1) == "soc_a");
  CHECK(mixed->SocOf(2) == "soc_b");
  CHECK(mixed->TasksOf(2) == mixed->TasksOf(0));  // each group tunes every task, split alike
  CHECK(mixed->TasksOf(3) == mixed->TasksOf(1));
  WriteFile(dir / "mixed.json", DumpJson(mixed->ToJson(), 1));
  auto read = ReadBatchPlan(dir / "mixed.json");
  REQUIRE_MESSAGE(read.ok(), read.status().message());
  CHECK(read->soc_versions == mixed->soc_versions);
  CHECK(read->plan_id == mixed->plan_id);

  // Another order of soc_versions, or one of them alone, is another plan.
  in.soc_versions = {"soc_b", "soc_a"};
  CHECK(MakeBatchPlan(in)->plan_id != mixed->plan_id);
  in.soc_versions = {"soc_a"};
  auto single = MakeBatchPlan(in);
  REQUIRE(single.ok());
  CHECK(single->plan_id != mixed->plan_id);

  // One soc_version is written as plan format version 1, as a tilebank before several were read
  // it; a plan it wrote keeps its id.
  CHECK(single->ToJson()["version"] == 1);
  CHECK(mixed->ToJson()["version"] == kBatchPlanVersion);
  nlohmann::json v1 = single->ToJson();
  v1["version"] = 1;
  v1["soc_version"] = "soc_a";
  v1.erase("soc_versions");
  v1.erase("shards_per_soc_version");
  WriteFile(dir / "v1.json", DumpJson(v1, 1));
  auto old = ReadBatchPlan(dir / "v1.json");
  REQUIRE_MESSAGE(old.ok(), old.status().message());
  CHECK(old->soc_versions == std::vector<std::string>{"soc_a"});
  CHECK(old->plan_id == single->plan_id);

  for (const auto& bad : std::vector<std::vector<std::string>>{{"soc_a", "soc_a"}, {"a/b"}, {""}, {"shards"}, {}}) {
    in.soc_versions = bad;
    const std::string named = bad.empty() ? "none" : bad[0];
    CHECK_MESSAGE(!MakeBatchPlan(in).ok(), named);
  }
  nlohmann::json twice = mixed->ToJson();
  twice["soc_versions"] = {"soc_a", "soc_a"};
  WriteFile(dir / "twice.json", DumpJson(twice));
  CHECK(!ReadBatchPlan(dir / "twice.json").ok());
}

TEST_CASE("batch plan: a model list names its models, relative to the list, bad lines are refused by line") {
  TempDir dir;
  WriteFile(dir / "models.txt", "# comment\n\nm/a.onnx\n/abs/b.onnx x:1,3,8,8\n");
  auto models = ReadModelList(dir / "models.txt");
  REQUIRE_MESSAGE(models.ok(), models.status().message());
  REQUIRE(models->size() == 2);
  CHECK((*models)[0].path == dir / "m/a.onnx");
  CHECK((*models)[1].input_shapes.at("x") == std::vector<int64_t>{1, 3, 8, 8});
  WriteFile(dir / "bad.txt", "a.onnx x:1 extra\n");
  auto bad = ReadModelList(dir / "bad.txt");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("line 1") != std::string::npos);
  WriteFile(dir / "empty.txt", "# nothing\n");
  CHECK(!ReadModelList(dir / "empty.txt").ok());
  // A gradient list: one path a line; CRLF and lines of other white space are read as blank.
  WriteFile(dir / "profiles.txt", "p/a.json\r\n\f\n \v \n/abs/b.json\n");
  auto profiles = ReadGradientList(dir / "profiles.txt");
  REQUIRE_MESSAGE(profiles.ok(), profiles.status().message());
  CHECK(*profiles == std::vector<std::string>{dir / "p/a.json", "/abs/b.json"});
  WriteFile(dir / "two.txt", "a.json b.json\n");
  CHECK(!ReadGradientList(dir / "two.txt").ok());
}

}  // namespace
}  // namespace tilebank::engine
