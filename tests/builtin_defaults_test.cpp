// What a model runs with before any tuning: each op class's built-in choice (oneDNN for
// convolutions and matrix products, their activations fused as post-ops), the entry of the nearest
// shape when the bank has one for the same operator at another batch, and tuning at a new shape
// starting from that entry (engine/catalog/builtin_choice.h, repo/lookup.h, engine/tuning/tuner.h).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/backends/library_impls.h"
#include "engine/runtime/model_session.h"
#include "engine/core/soc_version.h"
#include "engine/core/template_catalog.h"
#include "engine/backends/halide/templates.h"
#include "engine/tuning/tuner.h"
#include "repo/bank.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

// x [1,8,12,12] -> Conv 3x3 -> Relu -> Softmax (axis 1).
std::string ConvReluSoftmax(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {1, 8, 12, 12});
  b.Weight("w", {16, 8, 3, 3});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"});
  ModelBuilder::IntAttr(b.Node("Softmax", {"r"}, {"y"}), "axis", 1);
  b.Output("y", {1, 16, 12, 12});
  return b.Save(dir / "conv.onnx");
}

// x [batch,64] -> MatMul w [64,48]: one operator whose key follows the batch.
std::string BatchedMatMul(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {-1, 64});
  b.Weight("w", {64, 48});
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y", {-1, 48});
  return b.Save(dir / "matmul.onnx");
}

nlohmann::json Profile(const CommandResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

TEST_CASE("run with an empty bank: the op classes' built-in choices, a convolution's activation fused into oneDNN, the templates' defaults on request") {
  TempDir dir;
  const std::string model = ConvReluSoftmax(dir);
  const std::string run = "run -m " + model + " --bank " + (dir / "none") + " --repeat 1 --json --profile";
  const auto builtin = Profile(RunCli(run));
  REQUIRE(builtin["profile"].size() == 2);
  CHECK(builtin["profile"][0]["op_type"] == "Conv+Relu");
  CHECK(builtin["profile"][0]["template"] == "sgat.fused");
  CHECK(builtin["profile"][0]["source"] == "builtin");
  CHECK(builtin["profile"][1]["op_type"] == "Softmax");
  CHECK(builtin["profile"][1]["source"] == "builtin");
  CHECK(builtin["policies"]["builtin"] == 2);
  CHECK(builtin["policies"]["bank"] == 0);

  const auto templates = Profile(RunCli(run, "TILEBANK_DEFAULT_POLICIES=template"));
  REQUIRE(templates["profile"].size() == 3);
  CHECK(templates["profile"][0]["template"] == "conv2d.direct");
  CHECK(templates["profile"][0]["source"] == "builtin");
  CHECK(templates["profile"][1]["op_type"] == "Relu");

  auto bad = RunCli(run, "TILEBANK_DEFAULT_POLICIES=fastest");
  CHECK(bad.exit_code == 2);
  CHECK_MESSAGE(bad.err.find("TILEBANK_DEFAULT_POLICIES is 'fastest'") != std::string::npos, bad.err);
  for (const std::string job : {"1", "2"}) {  // tuning refuses it too, before it writes anything
    auto tune = RunCli("tune -j " + job + " -m " + model + " --bank " + (dir / "bank") + " --output " + (dir / "out"), "TILEBANK_DEFAULT_POLICIES=fastest");
    CheckRefusedWritingNothing(tune, "TILEBANK_DEFAULT_POLICIES is 'fastest'", {dir / "bank", dir / "out"});
  }
  auto online = RunCli(run + " --tune online --output " + (dir / "out"), "TILEBANK_DEFAULT_POLICIES=fastest");
  CheckRefusedWritingNothing(online, "TILEBANK_DEFAULT_POLICIES is 'fastest'", {dir / "none", dir / "out"});
}

TEST_CASE("run at a batch the bank never saw takes the nearest batch's entry, computes the right result, and tuning there starts from it") {
  TempDir dir;
  const std::string model = BatchedMatMul(dir);
  const std::string bank_root = dir / "bank";
  // The bank knows the MatMul at batch 16 only, in OpenBLAS (not the built-in choice, oneDNN).
  Entry at16 = MatMulEntry(16, 64, 48, 5.0);
  at16.template_version = engine::OpenBlasImpl().version();
  {
    auto bank = CreateBank(bank_root + "/" + HostSocVersion(), HostSocVersion());
    REQUIRE(bank->Write([&](WriteTxn& txn) { return txn.Put(at16, PutPolicy::kOverwrite).status(); }).ok());
  }
  const std::string run = "run -m " + model + " --bank " + bank_root + " --repeat 1 --json --profile --input-shape x:";
  const auto exact = Profile(RunCli(run + "16,64"));
  CHECK(exact["profile"][0]["source"] == "bank");
  CHECK(exact["profile"][0]["template"] == "impl.openblas");
  const auto near = Profile(RunCli(run + "40,64"));
  CHECK(near["profile"][0]["shape"] == "40x48");
  CHECK(near["profile"][0]["source"] == "nearest");
  CHECK(near["profile"][0]["template"] == "impl.openblas");
  CHECK(near["policies"]["nearest"] == 1);

  // In process: the nearest entry's kernel computes x.w at batch 40.
  auto graph = engine::model::ImportModel(model, {{"x", {40, 64}}});
  REQUIRE_MESSAGE(graph.ok(), graph.status().message());
  auto bank = OpenExisting(bank_root + "/" + HostSocVersion(), OpenMode::kReadOnly);
  auto executor = engine::model::BindToBank(*graph, bank.get());
  REQUIRE_MESSAGE(executor.ok(), executor.status().message());
  const auto inputs = engine::model::RandomInputs((*executor)->graph(), 5);
  std::vector<engine::Tensor> outputs;
  REQUIRE((*executor)->Run({&inputs[0]}, &outputs).ok());
  const engine::model::Graph& g = (*executor)->graph();
  const auto& w = g.values[g.nodes[0].inputs[1]].constant->AsTensor().data;
  double worst = 0;
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 48; ++j) {
      double sum = 0;
      for (int k = 0; k < 64; ++k) sum += double(inputs[0].data[i * 64 + k]) * w[k * 48 + j];
      worst = std::max(worst, std::fabs(sum - outputs[0].data[i * 48 + j]));
    }
  CHECK(worst < 1e-4);

  // Tuning at batch 40 measures the built-in choice (the baseline), then the nearest entry.
  REQUIRE((*executor)->bindings()[0].op.has_value());
  const engine::OpSpec& op = (*executor)->bindings()[0].op->op;
  engine::TuneOptions options;
  options.trials = 4;
  options.confirm_top = 1;
  options.starting_points.push_back({at16.template_id, at16.policy});
  std::vector<std::string> tried;
  auto outcome = engine::TuneOp(op, options, [&](const engine::TrialEvent& e) { tried.push_back(e.template_id + " " + e.policy_text); });
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  REQUIRE(tried.size() >= 2);
  CHECK(tried[0] == "impl.onednn algo=auto,impl=default");
  CHECK(tried[1] == "impl.openblas library=openblas");
  CHECK(std::count(tried.begin(), tried.end(), tried[1]) == 1);  // Impl mode does not measure it again

  // `tune -j 2 -m` at batch 40 runs through the same path and stores a batch-40 entry or none.
  auto tune = RunCli("tune -j 2 -m " + model + " --input-shape x:40,64 --bank " + bank_root + " --trials 4 --output " + (dir / "out"));
  CHECK_MESSAGE(tune.exit_code == 0, tune.err);
}

}  // namespace
}  // namespace tilebank::testing
