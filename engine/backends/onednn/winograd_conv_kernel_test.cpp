// The own Winograd convolutions against a direct convolution in double: F(2,3), F(4,3), F(6,3),
// odd channel counts and image sizes that leave partial tiles, asymmetric pads, two images, with and
// without the bias, fused epilogues (a residual Add, then each activation it fuses); NCHW in and out, the
// measured path, and the channel-blocked and NHWC layouts (24 channels in, 40 out: blocks that are
// not multiples of 16) handed over as a neighbouring oneDNN kernel would.
#include <doctest/doctest.h>

#include <dnnl.hpp>

#include <cmath>

#include "engine/backends/onednn/onednn_common.h"
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
    const std::vector<int64_t> out_shape = {p.N, p.OC, p.OH, p.OW}, in_shape = {p.N, p.C, p.H, p.W};
    const std::vector<float> x = Values(static_cast<size_t>(p.N) * p.C * p.H * p.W, 1), w = Values(static_cast<size_t>(p.OC) * p.C * 9, 2),
                             b = Values(p.OC, 3), z = Values(static_cast<size_t>(p.N) * p.OC * p.OH * p.OW, 4);
    Tensor weights({p.OC, p.C, 3, 3}), bias({p.OC}), input(in_shape), residual(out_shape);
    weights.data = w, bias.data = b, input.data = x, residual.data = z;
    for (const std::string algo : {"winograd_f2", "winograd_f4", "winograd_f6"}) {
      const double tolerance = OwnWinogradTile(algo) == 6 ? 2e-3 : 2e-4;
      for (bool with_residual : {false, true})
        for (const std::string activation : {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "Swish", "HardSwish", "Tanh", "GeluTanh"}) {
          CAPTURE(k);
          CAPTURE(algo);
          CAPTURE(with_residual);
          CAPTURE(activation);
          const std::vector<double> want = Reference(p, x, w, b, with_residual ? z : std::vector<float>{}, activation);
          const std::vector<ChainStep> steps = Epilogue(with_residual, activation, out_shape);
          const int residual_input = p.bias ? 3 : 2;
          std::vector<const Tensor*> constants = {nullptr, &weights, p.bias ? &bias : nullptr};
          if (with_residual) constants.resize(residual_input + 1, nullptr);
          // The measured path.
          auto measured = OwnWinogradConvKernel(p, out_shape, OwnWinogradTile(algo), steps, "auto");
          REQUIRE(measured.ok());
          std::vector<const Tensor*> all = {&input, &weights, p.bias ? &bias : nullptr};
          if (with_residual) all.resize(residual_input + 1, nullptr), all[residual_input] = &residual;
          REQUIRE((*measured)->Prepare(all).ok());
          REQUIRE((*measured)->Run().ok());
          Tensor got;
          REQUIRE((*measured)->Fetch(&got).ok());
          CHECK(WorstError(got.data, want) < tolerance);
          // The direct path, NCHW on both sides.
          for (const char* layout : {"plain", "blocked", "auto"}) {
            auto kernel = OwnWinogradConvKernel(p, out_shape, OwnWinogradTile(algo), steps, layout);
            REQUIRE(kernel.ok());
            auto bound = (*kernel)->BindDirect({}, constants);
            REQUIRE(bound.ok());
            REQUIRE(*bound);
            std::vector<const float*> in(constants.size(), nullptr);
            in[0] = x.data();
            if (with_residual) in[residual_input] = z.data();
            std::vector<float> y(want.size());
            REQUIRE((*kernel)->RunDirect(in, y.data()).ok());
            CHECK(WorstError(y, want) < tolerance);
          }
          // Blocked (and NHWC, where the channels allow) on every side, the output written over the residual.
          for (const std::string handover : {"blocked", "nhwc", "auto"}) {
            if (handover == "nhwc" && (p.C % 8 != 0 || p.OC % 8 != 0)) continue;
            CAPTURE(handover);
            auto kernel = OwnWinogradConvKernel(p, out_shape, OwnWinogradTile(algo), steps, handover);
            REQUIRE(kernel.ok());
            REQUIRE((*kernel)->BindDirect({}, constants).ok());
            const HandoverLayout src_layout = (*kernel)->NativeLayout(0), dst_layout = (*kernel)->NativeLayout(-1);
            REQUIRE_FALSE(src_layout.row_major());
            REQUIRE_FALSE(dst_layout.row_major());
            if (with_residual) CHECK((*kernel)->NativeLayout(residual_input).key == dst_layout.key);
            std::vector<bool> handed(constants.size(), false);
            handed[0] = true;
            if (with_residual) handed[residual_input] = true;
            REQUIRE((*kernel)->UseNativeLayouts(handed, true).ok());
            const std::vector<float> xb = Reorder(x, in_shape, src_layout, true);
            std::vector<float> yb = with_residual ? Reorder(z, out_shape, dst_layout, true) : std::vector<float>(dst_layout.floats);
            std::vector<const float*> in(constants.size(), nullptr);
            in[0] = xb.data();
            if (with_residual) in[residual_input] = yb.data();
            REQUIRE((*kernel)->RunDirect(in, yb.data()).ok());
            CHECK(WorstError(Reorder(yb, out_shape, dst_layout, false), want) < tolerance);
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
