// The own 1-D convolution kernel against a convolution in double: causal dilated (a TCN's),
// padded both sides with odd channel counts, grouped, two images, over a long row, strided; each epilogue
// after a residual Add or alone; NCHW in and out and the measured path, on one thread and three.
// What it refuses, and impl.onednn's built-in choice for a Conv1d.
#include <doctest/doctest.h>

#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/direct_conv1d_kernel.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

ConvProblem Conv1d(int n, int c, int oc, int w, int k, int dilation, int pad, int pad_end, int groups, bool bias, int stride = 1) {
  ConvProblem p;
  p.N = n, p.C = c, p.H = 1, p.W = w, p.OC = oc, p.KH = 1, p.KW = k, p.G = groups, p.Cg = c / groups, p.OCg = oc / groups;
  p.dw = dilation, p.pw = pad, p.pw_end = pad_end, p.bias = bias, p.sw = stride;
  p.OH = 1, p.OW = (w + pad + pad_end - dilation * (k - 1) - 1) / stride + 1;
  return p;
}

TEST_CASE("own 1-D convolution kernel: dilated, padded, grouped, its epilogue fused, NCHW and measured") {
  const std::vector<ConvProblem> problems = {
      Conv1d(1, 16, 24, 50, 3, 4, 8, 0, 1, true),    // causal, dilation 4
      Conv1d(1, 7, 19, 37, 5, 1, 2, 2, 1, false),    // odd channel counts, no bias
      Conv1d(2, 8, 12, 40, 3, 2, 2, 2, 4, true),     // grouped, two images
      Conv1d(1, 12, 20, 700, 2, 16, 16, 0, 1, true),  // a long row: ranges per thread
      Conv1d(1, 3, 24, 500, 10, 1, 0, 0, 1, true, 5),  // strided (a wav2vec feature extractor's first layer)
      Conv1d(1, 8, 40, 60, 3, 1, 1, 1, 2, true)};       // 20 output channels a group: blocks of 8, 8 and 4
  ForEachOwnConvCase(problems, {"", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "GeluTanh"}, [&](size_t k, const OwnConvCheck& check) {
    auto kernel = [&](const char* layout) {
      auto made = OwnDirectConv1dKernel(problems[k], check.out_shape(), check.steps(), layout);
      REQUIRE_MESSAGE(made.ok(), made.status().message());
      return std::move(made.value());
    };
    CHECK(check.Measured(*kernel("auto")) < 1e-5);
    CHECK(check.Nchw(*kernel("plain")) < 1e-5);
    CHECK(kernel("plain")->NativeLayout(0).row_major());  // NCHW is its layout: nothing to hand over
  });
}

TEST_CASE("own 1-D convolution kernel: what it does not run is refused, and impl.onednn's built-in choice of a Conv1d") {
  CHECK(OwnDirectConv1dRefuses(Conv1d(1, 8, 8, 20, 3, 1, 1, 1, 1, false, 2)).empty());
  ConvProblem undilated = Conv1d(1, 8, 8, 20, 3, 1, 1, 1, 1, false);
  undilated.dw = 0;
  CHECK(OwnDirectConv1dRefuses(undilated).find("at least 1") != std::string::npos);
  ConvProblem image = Conv1d(1, 8, 8, 20, 3, 1, 1, 1, 1, false);
  image.H = image.OH = 5;
  CHECK(OwnDirectConv1dRefuses(image).find("height 1") != std::string::npos);
  const ConvProblem p = Conv1d(1, 8, 8, 20, 3, 1, 1, 1, 1, false);
  CHECK_FALSE(OwnDirectConv1dKernel(p, {1, 8, 1, 20}, {}, "nhwc").ok());
  CHECK_FALSE(OwnDirectConv1dKernel(p, {1, 8, 1, 20}, {{"Mul", 0, 0, true, {1, 8, 1, 20}}}, "auto").ok());
  // A Conv1d: the built-in choice times oneDNN's against the own kernel ("auto"), and the own
  // kernel is a policy of its space that builds.
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"attr", {{"dilations", {1, 2}}, {"kernel_shape", {1, 3}}, {"pads", {0, 4, 0, 0}}}},
                                       {"input_desc", {{{"shape", {1, 32, 1, 100}}, {"type", "float32"}}, {{"shape", {32, 32, 1, 3}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {1, 32, 1, 100}}, {"type", "float32"}}}}},
                        0);
  REQUIRE_MESSAGE(op.ok(), op.status().message());
  CHECK(PolicyText(OneDnnImpl().DefaultPolicy(*op)) == "algo=auto,impl=default,layout=auto");
  const Policy own = MakePolicy({{"algo", std::string(kOwnDirect1dAlgo)}, {"impl", std::string("default")}, {"layout", std::string("plain")}});
  const SearchSpace space = OneDnnImpl().Space(*op);
  CHECK(space.valid(own));
  CHECK(OneDnnImpl().Build(*op, own).ok());
  CHECK(OneDnnImpl().Build(*op, OneDnnImpl().DefaultPolicy(*op)).ok());
}

}  // namespace
}  // namespace tilebank::engine
