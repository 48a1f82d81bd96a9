// The own Winograd convolutions against a direct convolution in double: F(2,3), F(4,3), F(6,3),
// odd channel counts and image sizes that leave partial tiles, asymmetric pads, two images, with and
// without the bias, fused epilogues (a residual Add, then each activation it fuses); NCHW in and out, the
// measured path, and the channel-blocked and NHWC layouts (24 channels in, 40 out: blocks that are
// not multiples of 16) handed over as a neighbouring oneDNN kernel would.
#include <doctest/doctest.h>

#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/backends/onednn/winograd_conv_kernel.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

ConvProblem Problem(int n, int c, int h, int w, int oc, int ph, int pw, int ph_end, int pw_end, bool bias) {
  ConvProblem p;
  p.N = n, p.C = c, p.H = h, p.W = w, p.OC = oc, p.KH = 3, p.KW = 3, p.Cg = c, p.OCg = oc;
  p.ph = ph, p.pw = pw, p.ph_end = ph_end, p.pw_end = pw_end, p.bias = bias;
  p.OH = h + ph + ph_end - 2, p.OW = w + pw + pw_end - 2;
  return p;
}

TEST_CASE("own Winograd: F(2,3), F(4,3) and F(6,3) compute the convolution, its epilogue fused, in NCHW and blocked layouts") {
  const std::vector<ConvProblem> problems = {Problem(1, 5, 9, 11, 7, 1, 1, 1, 1, true), Problem(2, 16, 8, 8, 32, 1, 1, 1, 1, false),
                                             Problem(1, 3, 7, 6, 20, 0, 1, 1, 0, true), Problem(1, 24, 10, 9, 40, 1, 1, 1, 1, true)};
  for (size_t k = 0; k < problems.size(); ++k) {
    const ConvProblem& p = problems[k];
    for (const std::string algo : {"winograd_f2", "winograd_f4", "winograd_f6"}) {
      const double tolerance = OwnWinogradTile(algo) == 6 ? 2e-3 : 2e-4;
      for (bool with_residual : {false, true})
        for (const std::string activation : {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "Swish", "HardSwish", "Tanh", "GeluTanh"}) {
          CAPTURE(k);
          CAPTURE(algo);
          CAPTURE(with_residual);
          CAPTURE(activation);
          const OwnConvCheck check(p, with_residual, activation);
          auto kernel = [&](const std::string& layout) {
            auto built = OwnWinogradConvKernel(p, check.out_shape(), OwnWinogradTile(algo), check.steps(), layout);
            REQUIRE(built.ok());
            return std::move(built.value());
          };
          CHECK(check.Measured(*kernel("auto")) < tolerance);
          for (const char* layout : {"plain", "blocked", "auto"}) CHECK(check.Nchw(*kernel(layout)) < tolerance);
          // Blocked (and NHWC, where the channels allow) on every side, the output written over the residual.
          for (const std::string handover : {"blocked", "nhwc", "auto"}) {
            if (handover == "nhwc" && (p.C % 8 != 0 || p.OC % 8 != 0)) continue;
            CAPTURE(handover);
            std::vector<float> yb;
            HandoverLayout dst_layout;
            CHECK(check.HandedOver(*kernel(handover), &yb, &dst_layout) < tolerance);
            // The channels past the output's in the last block are zero, as oneDNN's neighbours expect.
            if (p.OC % 8 != 0 && (dst_layout.name.find("16c") != std::string::npos || dst_layout.name.find("8c") != std::string::npos)) {
              const int64_t block = dst_layout.name.find("16c") != std::string::npos ? 16 : 8;
              const int64_t blocks = (p.OC + block - 1) / block;
              for (int64_t at = 0; at < static_cast<int64_t>(p.OH) * p.OW; ++at)
                for (int64_t lane = p.OC % block; lane < block; ++lane) CHECK(yb[((blocks - 1) * p.OH * p.OW + at) * block + lane] == 0.f);
            }
          }
        }
    }
  }
}

TEST_CASE("own Winograd: what it does not run is refused, naming it") {
  ConvProblem strided = Problem(1, 4, 8, 8, 4, 1, 1, 1, 1, false);
  strided.sh = 2;
  CHECK(OwnWinogradRefuses(strided).find("stride-1") != std::string::npos);
  ConvProblem five = Problem(1, 4, 8, 8, 4, 1, 1, 1, 1, false);
  five.KH = five.KW = 5;
  CHECK(OwnWinogradRefuses(five).find("3x3") != std::string::npos);
  const ConvProblem p = Problem(1, 4, 8, 8, 4, 1, 1, 1, 1, false);
  CHECK(OwnWinogradRefuses(p).empty());
  // 4 channels: blocked and NCHW for each tile, no NHWC; nothing for a strided convolution.
  const std::vector<std::pair<std::string, std::string>> offers = {{"winograd_f2", "blocked"}, {"winograd_f2", "plain"}, {"winograd_f4", "blocked"},
                                                                   {"winograd_f4", "plain"},   {"winograd_f6", "blocked"}, {"winograd_f6", "plain"}};
  CHECK(OwnWinogradOffers(p) == offers);
  CHECK(OwnWinogradOffers(strided).empty());
  CHECK(OwnWinogradOffers(Problem(1, 16, 8, 8, 8, 1, 1, 1, 1, false)).size() == 9);
  CHECK(OwnWinogradTile("winograd") == 0);
  auto gelu = OwnWinogradConvKernel(p, {1, 4, 8, 8}, 4, {{"Gelu", 0, 0, false, {}}}, "auto");
  REQUIRE_FALSE(gelu.ok());
  CHECK(gelu.status().message().find("Gelu") != std::string::npos);
  auto product = OwnWinogradConvKernel(p, {1, 4, 8, 8}, 4, {{"Mul", 0, 0, true, {1, 4, 1, 1}}}, "auto");
  REQUIRE_FALSE(product.ok());
  CHECK(product.status().message().find("Mul") != std::string::npos);
  CHECK_FALSE(OwnWinogradConvKernel(p, {1, 4, 8, 8}, 4, {}, "nhwc").ok());
  CHECK_FALSE(OwnWinogradConvKernel(p, {1, 4, 8, 8}, 3, {}, "auto").ok());
}

}  // namespace
}  // namespace tilebank::engine
