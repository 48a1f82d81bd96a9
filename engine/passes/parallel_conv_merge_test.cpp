// Branches summed over the same input folded into one convolution: a RepVGG block as trained (3x3,
// 1x1 and a BatchNormalization of the input, then Relu) and a grouped one, a depthwise convolution
// beside its input's BatchNormalization, each computing what the graph without the passes
// computes; and sums that must stay: a 2x2 filter that cannot be centred, a branch read elsewhere.
#include "engine/passes/parallel_conv_merge.h"

#include <doctest/doctest.h>

#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"
#include "tests/unpassed_comparison.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

// A BatchNormalization of `x` (channels c) named `name`, its variance positive.
void BatchNorm(ModelBuilder* b, const std::string& name, const std::string& x, int64_t c) {
  b->Weight(name + ".gamma", {c});
  b->Weight(name + ".beta", {c});
  b->Weight(name + ".mean", {c});
  std::vector<float> var(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) var[static_cast<size_t>(i)] = 0.5f + 0.1f * static_cast<float>(i % 7);
  b->Floats(name + ".var", {c}, var);
  b->Node("BatchNormalization", {x, name + ".gamma", name + ".beta", name + ".mean", name + ".var"}, {name});
}

int Count(const Graph& g, const std::string& op_type) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op_type;
  return n;
}

TEST_CASE("parallel convolutions: RepVGG's three branches, grouped, and a depthwise one beside its input's BatchNormalization become one convolution") {
  for (int64_t group : {1, 2}) {
    CAPTURE(group);
    TempDir dir;
    ModelBuilder b;
    b.Input("x", {1, 8, 10, 12});
    b.Weight("w3", {8, 8 / group, 3, 3});
    b.Weight("b3", {8});
    b.Weight("w1", {8, 8 / group, 1, 1});
    ModelBuilder::IntAttr(ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w3", "b3"}, {"c3"}), "pads", {1, 1, 1, 1}), "group", group);
    ModelBuilder::IntAttr(b.Node("Conv", {"x", "w1"}, {"c1"}), "group", group);
    BatchNorm(&b, "bn", "x", 8);
    b.Node("Add", {"c3", "c1"}, {"s"});
    b.Node("Add", {"s", "bn"}, {"t"});
    b.Node("Relu", {"t"}, {"y"});
    b.Output("y", {1, 8, 10, 12});
    const std::string path = b.Save(dir / "repvgg.onnx");
    std::unique_ptr<Executor> e;
    CompareWithUnpassed(path, &e);
    auto imported = ImportOnnx(path, {}, {});
    REQUIRE_MESSAGE(imported.ok(), imported.status().message());
    CHECK(MergeParallelConvs(&imported.value()) == 2);  // the two Adds, in two sweeps
    CHECK(Count(e->graph(), "Add") == 0);
    CHECK(Count(e->graph(), "BatchNormalization") == 0);
    CHECK(Count(e->graph(), "Conv") == 1);
  }
  // A depthwise convolution beside its input's BatchNormalization.
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 16, 9, 9});
  b.Weight("w", {16, 1, 3, 3});
  ModelBuilder::IntAttr(ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1}), "group", 16);
  BatchNorm(&b, "bn", "x", 16);
  b.Node("Add", {"bn", "c"}, {"y"});
  b.Output("y", {1, 16, 9, 9});
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(b.Save(dir / "depthwise.onnx"), &e);
  CHECK(Count(e->graph(), "Add") == 0);
  CHECK(Count(e->graph(), "BatchNormalization") == 0);
}

TEST_CASE("parallel convolutions: sums that are not one convolution stay as they are") {
  TempDir dir;
  // A 2x2 filter beside a 3x3 one (no centre to place it at); a 1x1 branch whose output is also a
  // graph output (it must stay computed).
  ModelBuilder b;
  b.Input("x", {1, 8, 10, 10});
  b.Weight("w3", {8, 8, 3, 3});
  b.Weight("w2", {8, 8, 2, 2});
  b.Weight("w1", {8, 8, 1, 1});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w3"}, {"a"}), "pads", {1, 1, 1, 1});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w2"}, {"c"}), "pads", {0, 0, 1, 1});
  b.Node("Add", {"a", "c"}, {"s1"});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w3"}, {"d"}), "pads", {1, 1, 1, 1});
  b.Node("Conv", {"x", "w1"}, {"f"});
  b.Node("Add", {"d", "f"}, {"s2"});
  b.Output("s1", {1, 8, 10, 10});
  b.Output("s2", {1, 8, 10, 10});
  b.Output("f", {1, 8, 10, 10});
  const std::string path = b.Save(dir / "kept.onnx");
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(path, &e);
  auto imported = ImportOnnx(path, {}, {});
  REQUIRE_MESSAGE(imported.ok(), imported.status().message());
  CHECK(MergeParallelConvs(&imported.value()) == 0);
  CHECK(Count(imported.value(), "Add") == 2);
}

}  // namespace
}  // namespace tilebank::engine::model
