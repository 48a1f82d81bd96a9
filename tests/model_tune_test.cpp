// OPAT on a model end to end: `tune -j 2 --model` (whole-model times in the result file, node
// names as op names, hits on a second run), online tuning (`run --tune online` tunes once, then
// starts at once) and offline tuning (`run --dump`, tune the list elsewhere, merge, run tuned).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

// x [16,64] -> MatMul w1 [64,64] -> Relu -> MatMul w2 [64,64] -> Relu: two MatMuls of one shape
// (one bank key) and two Relus.
std::string SmallModel(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {16, 64});
  b.Weight("w1", {64, 64});
  b.Weight("w2", {64, 64});
  b.Node("MatMul", {"x", "w1"}, {"h1"});
  b.Node("Relu", {"h1"}, {"a1"});
  b.Node("MatMul", {"a1", "w2"}, {"h2"});
  b.Node("Relu", {"h2"}, {"y"});
  b.Output("y", {16, 64});
  return b.Save(dir / "small.onnx");
}

nlohmann::json OpatOf(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("aoe_result_opat_", 0) == 0) return nlohmann::json::parse(ReadFile(e.path().string())).at(1).at("OPAT");
  return nullptr;
}

TEST_CASE("tune --model: whole-model times, node names, one task per bank key, then all hits" * doctest::test_suite("measured")) {
  TempDir dir;
  const std::string model = SmallModel(dir);
  const std::string common = "tune -j 2 -m " + model + " --bank " + (dir / "bank") + " --trials 3";
  // The templates' defaults, which run the Relus apart (the built-in choice fuses them into oneDNN).
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  auto first = RunCli(common + " --output " + (dir / "out1"), env);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.out.find("small process finished. Performance improved by") != std::string::npos);
  auto opat = OpatOf(dir / "out1");
  REQUIRE(!opat.is_null());
  CHECK(opat["model_baseline_performance(ms)"].get<double>() > 0);
  CHECK(opat["model_result_performance(ms)"].get<double>() > 0);
  CHECK(opat["repo_summary"]["total_num"] == 2);  // the two MatMuls are one task, the Relus another
  REQUIRE_MESSAGE(!opat["repo_modified_operators"].empty(), "no operator was added: the names below would go unchecked");
  for (const auto& op : opat["repo_modified_operators"]) {
    const std::string name = op["op_name"];
    CHECK_MESSAGE((name == "MatMul_h1" || name == "Relu_a1"), name);  // the first node of each key
  }
  auto second = RunCli(common + " --output " + (dir / "out2"), env);
  REQUIRE(second.exit_code == 0);
  auto again = OpatOf(dir / "out2");
  CHECK(again["repo_summary"]["repo_hit_num"].get<int>() + again["repo_summary"]["repo_unsatisfied_num"].get<int>() == 2);

  auto other = RunCli("tune -j 2 -m " + model + " --framework 3 --bank " + (dir / "bank3") + " --output " + (dir / "out3"));
  CheckRefusedWritingNothing(other, "only ONNX", {dir / "bank3", dir / "out3"});
}

TEST_CASE("run --tune online tunes what the bank lacks once and the next run starts at once") {
  TempDir dir;
  const std::string model = SmallModel(dir);
  const std::string common = "run -m " + model + " --tune online --trials 3 --repeat 2 --bank " + (dir / "bank") + " --output " + dir.path();
  auto first = RunCli(common);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.err.find("online tuning: " + dir.path()) != std::string::npos);
  auto second = RunCli(common + " --json");
  REQUIRE(second.exit_code == 0);
  CHECK_MESSAGE(second.err.find("every operator's policy is in the bank") != std::string::npos, second.err);
  // With nothing to tune the model is imported and bound once, as a plain run binds it: the same
  // number of kernels comes from the kernel cache (before, the check and the run each bound it).
  auto plain = RunCli("run -m " + model + " --repeat 2 --json --bank " + (dir / "bank"));
  REQUIRE(plain.exit_code == 0);
  auto kernels = [](const std::string& out) {
    const auto cache = nlohmann::json::parse(out)["kernel_cache"];
    return cache["loaded"].get<int>() + cache["compiled"].get<int>();
  };
  CHECK(kernels(plain.out) > 0);
  CHECK(kernels(second.out) == kernels(plain.out));
}

TEST_CASE("offline: run --dump, tune the list on its own, merge the bank back, and the model runs tuned") {
  TempDir dir;
  const std::string model = SmallModel(dir);
  // The templates' defaults as the baseline: each op of the list is run alone and beaten by tuning.
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  auto dumped = RunCli("run -m " + model + " --repeat 1 --dump " + (dir / "dump") + " --bank " + (dir / "none"), env);
  REQUIRE_MESSAGE(dumped.exit_code == 0, dumped.err);
  CHECK(dumped.out.find("0 from the bank") != std::string::npos);
  const std::string list = dir / "dump/aoe_dump/small_ops.json";
  auto ops = nlohmann::json::parse(ReadFile(list));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0]["name"] == "MatMul_h1");
  // "Another machine of the same soc_version": a bank of its own, merged back.
  REQUIRE(RunCli("tune -j 2 --singleop " + list + " --bank " + (dir / "remote") + " --trials 6 --output " + dir.path(), env).exit_code <= 1);
  REQUIRE(RunCli("bank merge " + (dir / "remote") + " --into " + (dir / "local")).exit_code == 0);
  auto tuned = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "local"), env);
  REQUIRE(tuned.exit_code == 0);
  CHECK_MESSAGE(tuned.out.find("0 from the bank") == std::string::npos, tuned.out);
}

}  // namespace
}  // namespace tilebank::testing
