// 1-D convolution networks run as 2-D ones of height 1: a TCN-style block (a causal Pad folded into a
// dilated Conv1d, a grouped one, the residual's 1x1 Conv, Relu, a per-channel Mul, MaxPool1d,
// BatchNormalization, a channel Concat, GlobalAveragePool) computes what the graph without the
// passes computes, every 1-D Conv gone, the outputs of their own shapes (a value the model outputs
// and a Transpose outside the region reshaped back). A 3-D Conv with its residual Add and Relu is one
// FusedConv node computing the same.
#include "engine/passes/conv1d_lifting.h"

#include <doctest/doctest.h>

#include "tests/unpassed_comparison.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

std::string WriteConv1dBlock(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {1, 6, 40});
  b.Ints("causal", {0, 0, 4, 0, 0, 0});
  b.Node("Pad", {"x", "causal"}, {"padded"});
  b.Weight("w1", {8, 6, 3});
  b.Weight("b1", {8});
  ModelBuilder::IntsAttr(b.Node("Conv", {"padded", "w1", "b1"}, {"c1"}), "dilations", {2});
  b.Node("Relu", {"c1"}, {"r1"});
  b.Weight("w2", {8, 4, 3});
  ModelBuilder::IntsAttr(ModelBuilder::IntAttr(b.Node("Conv", {"r1", "w2"}, {"c2"}), "group", 2), "pads", {1, 1});
  b.Weight("wd", {8, 6, 1});
  b.Node("Conv", {"x", "wd"}, {"skip"});
  b.Node("Add", {"c2", "skip"}, {"sum"});
  b.Node("Relu", {"sum"}, {"block"});
  b.Weight("scale", {8, 1});
  b.Node("Mul", {"block", "scale"}, {"scaled"});
  ModelBuilder::IntsAttr(ModelBuilder::IntsAttr(b.Node("MaxPool", {"scaled"}, {"pooled"}), "kernel_shape", {2}), "strides", {2});
  b.Weight("bn_scale", {8});
  b.Weight("bn_bias", {8});
  b.Weight("bn_mean", {8});
  b.Floats("bn_var", {8}, {1, 2, 0.5f, 1, 3, 1, 0.25f, 1});
  b.Node("BatchNormalization", {"pooled", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"normed"});
  ModelBuilder::IntAttr(b.Node("Concat", {"normed", "pooled"}, {"cat"}), "axis", 1);
  ModelBuilder::IntsAttr(b.Node("Transpose", {"cat"}, {"t"}), "perm", {0, 2, 1});
  b.Node("GlobalAveragePool", {"cat"}, {"gap"});
  b.Output("block", {1, 8, 40});
  b.Output("t", {1, 20, 16});
  b.Output("gap", {1, 16, 1});
  return b.Save(dir / "conv1d_block.onnx");
}

std::string WriteConv3dResidual(const TempDir& dir) {
  ModelBuilder b;
  b.Input("x", {1, 3, 4, 6, 6});
  b.Weight("w", {4, 3, 3, 3, 3});
  b.Weight("bias", {4});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w", "bias"}, {"a"}), "pads", {1, 1, 1, 1, 1, 1});
  b.Weight("wd", {4, 3, 1, 1, 1});
  b.Node("Neg", {"x"}, {"x_"});  // the skip convolves -x: a second convolution of x would merge into the first
  b.Node("Conv", {"x_", "wd"}, {"skip"});
  b.Node("Add", {"a", "skip"}, {"sum"});
  b.Node("Relu", {"sum"}, {"y"});
  b.Output("y", {1, 4, 4, 6, 6});
  return b.Save(dir / "conv3d_residual.onnx");
}

TEST_CASE("conv1d lifting: a 1-D convolution block runs in 2-D and computes what it computed") {
  TempDir dir;
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(WriteConv1dBlock(dir), &e);
  const Graph& g = e->graph();
  int convs = 0, reshapes = 0;
  for (const Node& n : g.nodes) {
    if (n.op_type == "Reshape") ++reshapes;
    if (n.op_type != "Conv") continue;
    ++convs;
    CHECK(g.values[n.inputs[0]].shape.size() == 4);
  }
  CHECK(convs == 3);
  CHECK(reshapes >= 3);  // x in; block, the Transpose's input and gap out
  for (int v : g.outputs) CHECK(g.values[v].shape.size() == 3);
}

TEST_CASE("conv epilogue fusion: a 3-D Conv, its residual Add and Relu are one FusedConv") {
  TempDir dir;
  std::unique_ptr<Executor> e;
  CompareWithUnpassed(WriteConv3dResidual(dir), &e);
  int fused = 0;
  for (const Node& n : e->graph().nodes) {
    CHECK(n.op_type != "Add");
    CHECK(n.op_type != "Relu");
    if (n.op_type != "FusedConv") continue;
    ++fused;
    CHECK(n.inputs.size() == 4);
    CHECK(n.attrs.value("activation", std::string()) == "Relu");
  }
  CHECK(fused == 1);
}

}  // namespace
}  // namespace tilebank::engine::model
