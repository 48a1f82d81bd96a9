// GroupNorm as torch.onnx writes it below opset 18, with and without the SiLU after it, becomes one
// FusedGroupNormalization node whose output is the chain's, checked against plain loops; a chain
// whose intermediate value another node also reads is left alone.
#include "engine/passes/group_norm_fusion.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

constexpr int64_t N = 1, C = 8, G = 2;

// x [N, C, H, W] -> Reshape [N, G, -1] -> InstanceNormalization -> Reshape -> Mul gamma -> Add beta
// [-> Sigmoid, Mul]; `tap`: the Mul's output is also a graph output.
std::string Write(const TempDir& dir, bool silu, bool tap, std::vector<float>* gamma, std::vector<float>* beta, int64_t H = 5, int64_t W = 6) {
  ModelBuilder b;
  b.Input("x", {N, C, H, W});
  b.Ints("grouped_shape", {N, G, -1});
  b.Ints("x_shape", {N, C, H, W});
  b.Floats("ones", {G}, std::vector<float>(G, 1.0f));
  b.Floats("zeros", {G}, std::vector<float>(G, 0.0f));
  *gamma = b.Weight("gamma", {C, 1, 1});
  *beta = b.Weight("beta", {C, 1, 1});
  b.Node("Reshape", {"x", "grouped_shape"}, {"grouped"});
  b.Node("InstanceNormalization", {"grouped", "ones", "zeros"}, {"normalized"});
  b.Node("Reshape", {"normalized", "x_shape"}, {"back"});
  b.Node("Mul", {"back", "gamma"}, {"scaled"});
  b.Node("Add", {"scaled", "beta"}, silu ? std::vector<std::string>{"shifted"} : std::vector<std::string>{"y"});
  if (silu) {
    b.Node("Sigmoid", {"shifted"}, {"gate"});
    b.Node("Mul", {"shifted", "gate"}, {"y"});
  }
  b.Output("y", {N, C, H, W});
  if (tap) b.Output("scaled", {N, C, H, W});
  return b.Save(dir / "group_norm.onnx");
}

TEST_CASE("group norm fusion: torch's GroupNorm (and SiLU) is one node, computing what the chain computes, for one value a channel up to large groups") {
  // {H, W}: a vector run a channel; one value a channel (GroupNorm over tokens' features); three;
  // groups of 1280 values (summed in blocks).
  for (const auto& hw : std::vector<std::pair<int64_t, int64_t>>{{5, 6}, {1, 1}, {1, 3}, {16, 20}})
  for (bool silu : {false, true}) {
    const int64_t H = hw.first, W = hw.second;
    CAPTURE(silu);
    CAPTURE(H * W);
    TempDir dir;
    std::vector<float> gamma, beta;
    auto e = LoadModel(Write(dir, silu, false, &gamma, &beta, H, W), {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    const Graph& g = (*e)->graph();
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op_type == "FusedGroupNormalization");
    CHECK(g.nodes[0].attrs.value("activation", "") == (silu ? "Swish" : ""));
    auto inputs = RandomInputs(g, 4);
    std::vector<Tensor> out;
    REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
    const auto& x = inputs[0].data;
    const int64_t per_group = C / G * H * W;
    double worst = 0;
    for (int64_t grp = 0; grp < G; ++grp) {
      double mean = 0, var = 0;
      for (int64_t k = 0; k < per_group; ++k) mean += x[grp * per_group + k];
      mean /= per_group;
      for (int64_t k = 0; k < per_group; ++k) var += (x[grp * per_group + k] - mean) * (x[grp * per_group + k] - mean);
      var /= per_group;
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t i = grp * per_group + k, c = i / (H * W);
        double v = (x[i] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c];
        if (silu) v = v / (1 + std::exp(-v));
        worst = std::max(worst, std::fabs(v - out[0].data[i]));
      }
    }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("group norm fusion: a chain whose intermediate another reader needs stays as it is") {
  TempDir dir;
  std::vector<float> gamma, beta;
  auto e = LoadModel(Write(dir, true, true, &gamma, &beta), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  for (const Node& n : (*e)->graph().nodes) CHECK(n.op_type != "FusedGroupNormalization");
}

}  // namespace
}  // namespace tilebank::engine::model
