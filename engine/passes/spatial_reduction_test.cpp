// Reductions over every spatial axis: PointNet's max over the points of a lifted 1-D convolution reads
// the convolution's 2-D output, and with the ReduceMean of a 2-D convolution runs as a global pool
// in the layout the convolution writes (its output handed over natively, not row-major); each
// computes what the graph without the passes computes, with dims kept or dropped. A reduction over
// some spatial axes stays as it was.
#include "engine/passes/spatial_reduction.h"

#include <doctest/doctest.h>

#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"
#include "tests/unpassed_comparison.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

TEST_CASE("spatial reduction: the max over a lifted Conv1d's points reads its 2-D output") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 3, 64});
  b.Weight("w", {32, 3, 1});
  b.Weight("bias", {32});
  b.Node("Conv", {"x", "w", "bias"}, {"c"});
  b.Node("Relu", {"c"}, {"r"});
  ModelBuilder::IntAttr(ModelBuilder::IntsAttr(b.Node("ReduceMax", {"r"}, {"max"}), "axes", {2}), "keepdims", 0);
  ModelBuilder::IntsAttr(b.Node("ReduceMean", {"r"}, {"mean"}), "axes", {-1});  // dims kept: [1, 32, 1]
  b.Output("max", {1, 32});
  b.Output("mean", {1, 32, 1});
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(b.Save(dir / "pointnet.onnx"), &e);
  const Graph& g = e->graph();
  int reductions = 0;
  for (const Node& n : g.nodes) {
    const bool back_to_1d = n.op_type == "Reshape" && g.values[n.inputs[0]].shape == std::vector<int64_t>{1, 32, 1, 64};
    CHECK_FALSE(back_to_1d);  // nothing reads the convolution's output back in 1-D
    if (n.op_type.rfind("Reduce", 0) != 0) continue;
    ++reductions;
    CHECK(g.values[n.inputs[0]].shape == std::vector<int64_t>{1, 32, 1, 64});
    CHECK(ReducesEverySpatialAxis(g, n));
  }
  CHECK(reductions == 2);
  // The convolution may write oneDNN's layout or NCHW (the own 1-D convolution, where it wins its
  // timing): the reductions read either (a layout's case: the 2-D test below).
}

TEST_CASE("spatial reduction: a 2-D convolution's spatial mean runs in its layout, and a mean over W alone stays a reduction") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 16, 12, 10});
  b.Weight("w", {32, 16, 3, 3});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  ModelBuilder::IntAttr(ModelBuilder::IntsAttr(b.Node("ReduceMean", {"c"}, {"mean"}), "axes", {2, 3}), "keepdims", 0);
  b.Output("mean", {1, 32});
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(b.Save(dir / "mean.onnx"), &e);
  for (const NodeBinding& step : e->bindings())
    if (step.op_type.rfind("Conv", 0) == 0) CHECK_MESSAGE(!step.layout.empty(), "the convolution writes row-major");

  ModelBuilder rows;
  rows.Input("x", {1, 16, 12, 10});
  ModelBuilder::IntsAttr(rows.Node("ReduceMax", {"x"}, {"y"}), "axes", {3});
  rows.Output("y", {1, 16, 12, 1});
  CompareWithUnpassed(rows.Save(dir / "rows.onnx"), &e);
  CHECK(!ReducesEverySpatialAxis(e->graph(), e->graph().nodes[0]));
}

}  // namespace
}  // namespace tilebank::engine::model
