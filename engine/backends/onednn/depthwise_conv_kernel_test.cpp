// The own depthwise convolution against a convolution in double: 3x3 and 5x5 filters of stride 1
// and 2 (the unrolled blocks), a dilated and a 7x1 filter (the general block), widths from 1 to 21
// (blocks of 8 and 4, edge columns), asymmetric pads, two images, 24 channels (a vector of 16 and
// one of 8), with and without the bias, each epilogue fused after a residual Add or alone; NCHW in
// and out, the measured path, and NHWC handed over with the output written over the residual, on
// one thread and on several (rows and channels split); blocks of columns over the channels, and
// channels across the row (impl "by_channel").
#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/depthwise_conv_kernel.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

ConvProblem Depthwise(int n, int c, int h, int w, int k_h, int k_w, int stride, int dilation, int ph, int pw, int ph_end, int pw_end, bool bias) {
  ConvProblem p;
  p.N = n, p.C = c, p.H = h, p.W = w, p.OC = c, p.G = c, p.Cg = 1, p.OCg = 1, p.KH = k_h, p.KW = k_w;
  p.sh = p.sw = stride, p.dh = p.dw = dilation, p.ph = ph, p.pw = pw, p.ph_end = ph_end, p.pw_end = pw_end, p.bias = bias;
  p.OH = (h + ph + ph_end - dilation * (k_h - 1) - 1) / stride + 1;
  p.OW = (w + pw + pw_end - dilation * (k_w - 1) - 1) / stride + 1;
  return p;
}

void CheckAgainstReference(const ConvProblem& p) {
  for (bool with_residual : {false, true})
    for (const std::string activation : {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "Swish", "HardSwish", "Tanh", "GeluTanh"}) {
      CAPTURE(with_residual);
      CAPTURE(activation);
      const OwnConvCheck check(p, with_residual, activation);
      auto kernel = [&](const char* layout, const char* impl) {
        auto k = OwnDepthwiseConvKernel(p, check.out_shape(), check.steps(), layout, impl);
        REQUIRE(k.ok());
        return std::move(k.value());
      };
      CHECK(check.Measured(*kernel("auto", "default")) < 1e-5);
      CHECK(check.Nchw(*kernel("plain", "default")) < 1e-5);
      CHECK(check.Nchw(*kernel("nhwc", "by_channel")) < 1e-5);
      std::vector<float> output;
      HandoverLayout layout;
      CHECK(check.HandedOver(*kernel("auto", "default"), &output, &layout) < 1e-5);
    }
}

TEST_CASE("own depthwise convolution: every filter, stride, dilation and width, its epilogue fused, in NCHW and NHWC") {
  const std::vector<ConvProblem> problems = {
      Depthwise(1, 24, 9, 21, 3, 3, 1, 1, 1, 1, 1, 1, true),   // blocks of 8 and 4, edges
      Depthwise(2, 16, 6, 7, 3, 3, 2, 1, 1, 1, 1, 1, false),   // stride 2, two images
      Depthwise(1, 8, 11, 13, 5, 5, 1, 1, 2, 2, 2, 2, true),   // 5x5
      Depthwise(1, 24, 12, 19, 5, 5, 2, 1, 1, 2, 2, 1, true),  // 5x5 stride 2, asymmetric pads
      Depthwise(1, 16, 10, 12, 3, 3, 1, 2, 2, 2, 2, 2, true),  // dilated: the general block
      Depthwise(1, 8, 9, 10, 7, 1, 1, 1, 3, 0, 3, 0, false),   // 7x1: the general block
      Depthwise(1, 32, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1, true),    // one column
      Depthwise(1, 48, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, true),    // no padding, one output
      // Wide rows: blocks of 8 and 4 inside the image (unchecked) for every unrolled filter and the general one.
      Depthwise(1, 24, 4, 58, 3, 3, 1, 1, 1, 1, 1, 1, true),   // 3x3: 58 columns
      Depthwise(1, 24, 5, 14, 3, 3, 1, 1, 0, 0, 0, 0, false),  // 3x3 unpadded: 12 columns, a block of 8 then of 4
      Depthwise(2, 16, 6, 45, 3, 3, 2, 1, 1, 1, 1, 1, true),   // 3x3 stride 2: 23 columns
      Depthwise(1, 16, 6, 50, 5, 5, 1, 1, 2, 2, 2, 2, false),  // 5x5: 50 columns
      Depthwise(1, 8, 5, 16, 5, 5, 1, 1, 0, 0, 0, 0, true),    // 5x5 unpadded: 12 columns
      Depthwise(1, 16, 7, 61, 5, 5, 2, 1, 2, 2, 2, 2, true),   // 5x5 stride 2: 31 columns
      Depthwise(1, 8, 6, 40, 3, 3, 1, 2, 2, 2, 2, 2, true),    // dilated, 40 columns: the general block inside
      Depthwise(1, 8, 3, 30, 3, 7, 1, 1, 1, 3, 1, 3, true)};   // 3x7: the general block, 30 columns
  for (int threads : {1, 3}) {
    SetLibraryThreads(threads);
    for (size_t k = 0; k < problems.size(); ++k) {
      CAPTURE(threads);
      CAPTURE(k);
      CheckAgainstReference(problems[k]);
    }
  }
  SetLibraryThreads(1);
}

TEST_CASE("own depthwise convolution: an infinity or NaN passes through as in the reference, no epilogue clamps it") {
  const ConvProblem p = Depthwise(1, 16, 6, 20, 3, 3, 1, 1, 1, 1, 1, 1, false);
  const std::vector<int64_t> out_shape = {1, 16, p.OH, p.OW};
  std::vector<float> x = Values(16 * 6 * 20, 1);
  x[0] = INFINITY;        // channel 0, (0, 0): reaches output (0, 0) of channel 0, a checked block
  x[6 * 20 + 45] = NAN;   // channel 1, (2, 5): reaches outputs of channel 1 inside the image
  Tensor weights({16, 1, 3, 3});
  weights.data = Values(16 * 9, 2);
  for (const char* activation : {"", "Relu"}) {
    CAPTURE(activation);
    auto kernel = OwnDepthwiseConvKernel(p, out_shape, Epilogue(false, activation, out_shape), "plain");
    REQUIRE(kernel.ok());
    REQUIRE((*kernel)->BindDirect({}, {nullptr, &weights}).ok());
    std::vector<float> y(16 * p.OH * p.OW);
    REQUIRE((*kernel)->RunDirect({x.data(), nullptr}, y.data()).ok());
    const std::vector<double> want = Reference(p, x, weights.data, {}, {}, activation);
    CHECK(std::isinf(want[0]) == std::isinf(y[0]));  // +-inf stays infinite (a Relu may make -inf 0)
    CHECK(want[0] == y[0]);
    const size_t nan_at = static_cast<size_t>(p.OH * p.OW + 2 * p.OW + 5);
    if (std::string(activation).empty()) CHECK(std::isnan(y[nan_at]));
  }
}

TEST_CASE("own depthwise convolution: what it does not run is refused, naming it") {
  ConvProblem dense = Depthwise(1, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, false);
  dense.G = 1, dense.Cg = 8, dense.OCg = 8;
  CHECK(OwnDepthwiseRefuses(dense).find("one filter per channel") != std::string::npos);
  CHECK(OwnDepthwiseOffers(dense).empty());
  const ConvProblem odd = Depthwise(1, 12, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, false);
  CHECK(OwnDepthwiseRefuses(odd).find("multiple of 8") != std::string::npos);
  const ConvProblem p = Depthwise(1, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, false);
  const std::vector<OwnDepthwiseOffer> offers = {{"depthwise_nhwc", "nhwc", "default"},
                                                 {"depthwise_nhwc", "nhwc", "by_channel"},
                                                 {"depthwise_nhwc", "plain", "default"},
                                                 {"depthwise_nhwc", "plain", "by_channel"}};
  CHECK(OwnDepthwiseOffers(p) == offers);
  CHECK_FALSE(OwnDepthwiseConvKernel(p, {1, 16, 8, 8}, {}, "nhwc", "jit:avx2").ok());
  CHECK_FALSE(OwnDepthwiseConvKernel(p, {1, 16, 8, 8}, {}, "blocked").ok());
  auto gelu = OwnDepthwiseConvKernel(p, {1, 16, 8, 8}, {{"Gelu", 0, 0, false, {}}}, "auto");
  REQUIRE_FALSE(gelu.ok());
  CHECK(gelu.status().message().find("Gelu") != std::string::npos);
}

}  // namespace
}  // namespace tilebank::engine
