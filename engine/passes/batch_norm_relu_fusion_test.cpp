// BatchNormalization then Relu becomes one FusedBatchNormalization node computing what the two
// compute, checked against plain loops; a norm whose output the model also outputs stays as it is.
#include "engine/passes/batch_norm_relu_fusion.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

constexpr int64_t kImages = 2, kChannels = 6, kPixels = 20;

std::string WriteNormRelu(const TempDir& dir, bool tap, std::vector<std::vector<float>>* params) {
  ModelBuilder b;
  b.Input("x", {kImages, kChannels, 4, 5});
  for (const char* name : {"scale", "bias", "mean"}) params->push_back(b.Weight(name, {kChannels}));
  std::vector<float> var(kChannels);
  for (int64_t c = 0; c < kChannels; ++c) var[c] = 0.5f + 0.25f * c;
  b.Floats("var", {kChannels}, var);
  params->push_back(var);
  b.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"normed"});
  b.Node("Relu", {"normed"}, {"y"});
  b.Output("y", {kImages, kChannels, 4, 5});
  if (tap) b.Output("normed", {kImages, kChannels, 4, 5});
  return b.Save(dir / "norm_relu.onnx");
}

TEST_CASE("batch norm relu fusion: BatchNormalization then Relu is one node computing what the two do") {
  TempDir dir;
  std::vector<std::vector<float>> p;
  auto e = LoadModel(WriteNormRelu(dir, false, &p), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  const Graph& g = (*e)->graph();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op_type == "FusedBatchNormalization");
  const std::vector<Tensor> inputs = RandomInputs(g, 7);
  std::vector<Tensor> out;
  REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
  double worst = 0;
  int zeros = 0;
  for (int64_t i = 0; i < kImages * kChannels * kPixels; ++i) {
    const int64_t c = i / kPixels % kChannels;
    const double v = std::max(0.0, (inputs[0].data[i] - p[2][c]) / std::sqrt(p[3][c] + 1e-5) * p[0][c] + p[1][c]);
    zeros += v == 0;
    worst = std::max(worst, std::fabs(v - out[0].data[i]));
  }
  CHECK(zeros > 0);  // the Relu cut something
  CHECK(worst < 1e-5);
}

TEST_CASE("batch norm relu fusion: a norm whose output the model also outputs stays a node") {
  TempDir dir;
  std::vector<std::vector<float>> p;
  auto e = LoadModel(WriteNormRelu(dir, true, &p), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  for (const Node& n : (*e)->graph().nodes) CHECK(n.op_type != "FusedBatchNormalization");
}

}  // namespace
}  // namespace tilebank::engine::model
