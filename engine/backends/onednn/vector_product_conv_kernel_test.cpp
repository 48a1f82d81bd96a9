// The own vector product against a convolution in double: a squeeze-excitation's 1x1 convolutions
// over one pixel (outputs fewer than a vector, not a multiple of one, more than a tile of four, a
// last tile partly padding),
// a filter covering a 3x2 input, two and three images, with and without the bias, each epilogue
// fused after a residual Add or alone; NCHW in and out and the measured path, on one thread and on
// several (outputs split); and what it refuses, and oneDNN taking over a chain it cannot fuse.
#include <doctest/doctest.h>

#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/backends/onednn/vector_product_conv_kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

// A filter covering the whole h x w input: one output pixel per image.
ConvProblem WholeInput(int n, int c, int oc, int h, int w, bool bias) {
  ConvProblem p;
  p.N = n, p.C = c, p.H = h, p.W = w, p.OC = oc, p.OH = 1, p.OW = 1, p.G = 1, p.Cg = c, p.OCg = oc, p.KH = h, p.KW = w, p.bias = bias;
  return p;
}

TEST_CASE("own vector product: 1x1 over one pixel and filters covering the input, its epilogue fused, NCHW and measured") {
  const std::vector<ConvProblem> problems = {
      WholeInput(1, 32, 8, 1, 1, true),      // squeeze: fewer outputs than a vector
      WholeInput(1, 8, 32, 1, 1, true),      // excite
      WholeInput(2, 1152, 48, 1, 1, true),   // two images; many inputs (the odd/even chains)
      WholeInput(1, 47, 1000, 1, 1, false),  // an odd input count; tiles of four, then a part vector
      WholeInput(1, 208, 52, 1, 1, true),    // a tile of four vectors, the last partly padding (RegNetY's)
      WholeInput(1, 20, 116, 1, 1, true),    // a whole tile, then four vectors the last partly padding
      WholeInput(3, 5, 20, 3, 2, true)};     // a 3x2 filter over a 3x2 input
  ForEachOwnConvCase(problems, {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "Swish", "HardSwish", "Tanh", "GeluTanh"}, [&](size_t k, const OwnConvCheck& check) {
    auto kernel = [&](const char* layout) {
      auto made = OwnVectorProductConvKernel(problems[k], check.out_shape(), check.steps(), layout);
      REQUIRE(made.ok());
      return std::move(made.value());
    };
    CHECK(check.Measured(*kernel("auto")) < 1e-5);
    CHECK(check.Nchw(*kernel("plain")) < 1e-5);
    CHECK(kernel("plain")->NativeLayout(0).row_major());  // nothing to hand over: NCHW is its layout
  });
}

TEST_CASE("own vector product: what it does not run is refused, naming it") {
  ConvProblem grouped = WholeInput(1, 8, 8, 1, 1, false);
  grouped.G = 2, grouped.Cg = 4, grouped.OCg = 4;
  CHECK(OwnVectorProductRefuses(grouped).find("ungrouped") != std::string::npos);
  ConvProblem spatial = WholeInput(1, 8, 8, 3, 3, false);
  spatial.KH = spatial.KW = 1, spatial.OH = spatial.OW = 3;
  CHECK(OwnVectorProductRefuses(spatial).find("one output pixel") != std::string::npos);
  ConvProblem padded = WholeInput(1, 8, 8, 1, 1, false);
  padded.ph = padded.ph_end = 1, padded.OH = 3;
  CHECK(OwnVectorProductRefuses(padded).find("unpadded") != std::string::npos);
  const ConvProblem p = WholeInput(1, 8, 8, 1, 1, false);
  CHECK(OwnVectorProductRefuses(p).empty());
  CHECK_FALSE(OwnVectorProductConvKernel(p, {1, 8, 1, 1}, {}, "nhwc").ok());
  auto gelu = OwnVectorProductConvKernel(p, {1, 8, 1, 1}, {{"Gelu", 0, 0, false, {}}}, "auto");
  REQUIRE_FALSE(gelu.ok());
  CHECK(gelu.status().message().find("Gelu") != std::string::npos);
}

TEST_CASE("own vector product: the built-in choice for one output pixel, oneDNN's where the chain is not one it fuses") {
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"input_desc", {{{"shape", {1, 64, 1, 1}}, {"type", "float32"}}, {{"shape", {16, 64, 1, 1}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {1, 16, 1, 1}}, {"type", "float32"}}}}},
                        0);
  REQUIRE(op.ok());
  Tensor weights({16, 64, 1, 1});
  weights.data = Values(16 * 64, 2);
  auto identity = [&](const std::vector<ChainStep>& chain) {
    auto kernel = OneDnnFusedKernel(*op, chain);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    auto bound = (*kernel)->BindDirect({}, {nullptr, &weights});
    REQUIRE(bound.ok());
    return (*kernel)->Identity();
  };
  CHECK(identity({{"Swish", 0, 0, false, {}}}).find("own vector_product") == 0);
  CHECK(identity({{"Gelu", 0, 0, false, {}}}).find("own") == std::string::npos);
}

}  // namespace
}  // namespace tilebank::engine
