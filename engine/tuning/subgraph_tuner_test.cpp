// The subgraph tuner on a MatMul + bias Add + Relu built here: it measures its baselines, tries
// every oneDNN post-op count and the Halide GEMM epilogue within the trials it is given, and its
// winner computes what the unfused subgraph does.
#include <doctest/doctest.h>

#include "engine/passes/constant_fold.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/onnx_import.h"
#include "engine/passes/partition.h"
#include "engine/tuning/subgraph_tuner.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

using namespace engine::model;

Graph MatMulBiasRelu(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {16, 32});
  b.Weight("w", {32, 24});
  b.Weight("bias", {24});
  b.Node("MatMul", {"x", "w"}, {"h"});
  b.Node("Add", {"h", "bias"}, {"hb"});
  b.Node("Relu", {"hb"}, {"y"});
  b.Output("y", {16, 24});
  auto g = ImportOnnx(b.Save(dir / "mm.onnx"), {});
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  REQUIRE(FoldConstants(&g.value()).ok());
  return std::move(g.value());
}

TEST_CASE("subgraph tuner: baselines measured, the other post-op counts and the Halide epilogue tried within the trials, the winner matches unfused") {
  TempDir dir;
  const Graph g = MatMulBiasRelu(dir);
  const auto subgraphs = PartitionSubgraphs(g);
  REQUIRE(subgraphs.size() == 1);
  REQUIRE(subgraphs[0].steps.size() == 2);
  engine::SubgraphTuneOptions o;
  o.trials = 5;  // the post-op count the built-in fusion does not run (1), then Halide candidates
  o.warmup = 1;
  o.repeats = 3;
  auto tuned = engine::TuneSubgraph(g, subgraphs[0], nullptr, o);
  REQUIRE_MESSAGE(tuned.ok(), tuned.status().message());
  CHECK(tuned->baseline.runs == 3);
  CHECK(tuned->baseline.median_us > 0);
  CHECK(tuned->tried == 5);
  CHECK(tuned->strategy == "exhaustive+GA");
  REQUIRE(tuned->found);
  CHECK(tuned->best.median_us > 0);
  CHECK(tuned->policy.fuse >= 0);
  CHECK(tuned->policy.fuse <= 2);
  // The winner, run in the model, computes what the model unfused does.
  const auto inputs = RandomInputs(g, 5);
  std::vector<const engine::Tensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  std::vector<engine::Tensor> unfused, fused;
  auto plain = Executor::Load(g, nullptr, [](const Subgraph&) { return FusionChoice{engine::OneDnnFusion(0), "test"}; });
  REQUIRE(plain.ok());
  REQUIRE((*plain)->Run(in, &unfused).ok());
  const engine::FusedPolicy winner = tuned->policy;
  auto with = Executor::Load(g, nullptr, [winner](const Subgraph&) { return FusionChoice{winner, "test"}; });
  REQUIRE(with.ok());
  REQUIRE((*with)->Run(in, &fused).ok());
  const Comparison c = CompareTensors(fused, unfused);
  CHECK_MESSAGE(c.ok, c.worst);
}

TEST_CASE("subgraph tuner: with one trial only the first post-op count is tried, and no GA runs") {
  TempDir dir;
  const Graph g = MatMulBiasRelu(dir);
  const auto subgraphs = PartitionSubgraphs(g);
  REQUIRE(subgraphs.size() == 1);
  engine::SubgraphTuneOptions o;
  o.trials = 1;
  o.warmup = 0;
  o.repeats = 1;
  auto tuned = engine::TuneSubgraph(g, subgraphs[0], nullptr, o);
  REQUIRE_MESSAGE(tuned.ok(), tuned.status().message());
  CHECK(tuned->tried == 1);
  CHECK(tuned->strategy == "exhaustive");
}

TEST_CASE("subgraph tuner: when the job's time runs out the candidates left are not tried, the baselines still are") {
  TempDir dir;
  const Graph g = MatMulBiasRelu(dir);
  const auto subgraphs = PartitionSubgraphs(g);
  REQUIRE(subgraphs.size() == 1);
  engine::SubgraphTuneOptions o;
  o.trials = 20;
  o.warmup = 0;
  o.repeats = 1;
  int tried = 0;
  o.on_trial = [&tried](const engine::SubgraphTrial&) { ++tried; };
  o.out_of_time = [&tried] { return tried >= 2; };  // two candidates, then the budget is spent
  auto tuned = engine::TuneSubgraph(g, subgraphs[0], nullptr, o);
  REQUIRE_MESSAGE(tuned.ok(), tuned.status().message());
  CHECK(tuned->baseline.median_us > 0);
  CHECK(tuned->tried == 2);
}

}  // namespace
}  // namespace tilebank::testing
