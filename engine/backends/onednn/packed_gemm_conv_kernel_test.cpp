// The own packed-GEMM convolution against a convolution in double: 1-D convolutions dilated and
// padded on one side (a TCN's causal layers), a strided and padded 2-D one with odd channel counts,
// two images, 1x1, a 9x9 filter bank too large to stay in cache; each epilogue after a residual Add or alone; NCHW in and out, the measured path,
// NHWC handed over; on one thread and three. What it refuses, and the built-in choice for a dilated
// convolution.
#include <doctest/doctest.h>

#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/backends/onednn/packed_gemm_conv_kernel.h"
#include "engine/backends/onednn/packed_gemm_kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/precision_mode.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

ConvProblem Conv(int n, int c, int oc, int h, int w, int kh, int kw, int sh, int sw, int dh, int dw, int ph, int pw, int ph_end, int pw_end, bool bias) {
  ConvProblem p;
  p.N = n, p.C = c, p.H = h, p.W = w, p.OC = oc, p.KH = kh, p.KW = kw, p.G = 1, p.Cg = c, p.OCg = oc;
  p.sh = sh, p.sw = sw, p.dh = dh, p.dw = dw, p.ph = ph, p.pw = pw, p.ph_end = ph_end, p.pw_end = pw_end, p.bias = bias;
  p.OH = (h + ph + ph_end - dh * (kh - 1) - 1) / sh + 1;
  p.OW = (w + pw + pw_end - dw * (kw - 1) - 1) / sw + 1;
  return p;
}

TEST_CASE("own packed-GEMM convolution: dilated, strided, padded one side or both, its epilogue fused, NCHW, measured and NHWC") {
  const std::vector<ConvProblem> problems = {
      Conv(1, 16, 24, 1, 50, 1, 3, 1, 1, 1, 4, 0, 8, 0, 0, true),    // causal, dilation 4
      Conv(1, 24, 19, 1, 37, 1, 3, 1, 1, 1, 2, 0, 4, 0, 0, false),   // an odd output count, no bias
      Conv(2, 5, 33, 9, 11, 3, 3, 2, 1, 2, 1, 1, 1, 2, 0, true),     // 2-D: strided, dilated rows, uneven pads, two images
      Conv(1, 7, 8, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true),       // 1x1, no pads
      Conv(2, 129, 33, 9, 9, 9, 9, 1, 1, 1, 1, 1, 1, 0, 0, true),   // K 10449: taken in chunks that end inside a tap
      Conv(2, 129, 13, 16, 16, 9, 9, 1, 1, 1, 1, 0, 0, 0, 0, false)};  // and over 128 positions: two blocks of whole tiles
  ForEachOwnConvCase(problems, {"", "Relu", "Sigmoid", "GeluTanh"}, [&](size_t k, const OwnConvCheck& check) {
    auto kernel = [&](const char* layout) {
      auto made = OwnPackedGemmConvKernel(problems[k], check.out_shape(), check.steps(), layout);
      REQUIRE_MESSAGE(made.ok(), made.status().message());
      return std::move(made.value());
    };
    // float32's rounding grows with the depth summed (K 10449: a few 1e-5; a wrong block or chunk: near 1)
    const ConvProblem& p = problems[k];
    const double tolerance = 1e-5 * std::max(1, p.C * p.KH * p.KW / 2000);
    CHECK(check.Measured(*kernel("auto")) < tolerance);
    CHECK(check.Nchw(*kernel("plain")) < tolerance);
    std::vector<float> output;
    HandoverLayout layout;
    CHECK(check.HandedOver(*kernel("nhwc"), &output, &layout) < tolerance);
  });
}

TEST_CASE("own packed-GEMM convolution: what it does not run is refused, and the built-in choice of a dilated convolution") {
  ConvProblem grouped = Conv(1, 8, 8, 1, 10, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, false);
  grouped.G = 2, grouped.Cg = 4, grouped.OCg = 4;
  CHECK(OwnPackedGemmConvRefuses(grouped).find("ungrouped") != std::string::npos);
  const ConvProblem p = Conv(1, 8, 8, 1, 10, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, false);
  CHECK_FALSE(OwnPackedGemmConvKernel(p, {1, 8, 1, 8}, {}, "blocked").ok());
  CHECK_FALSE(OwnPackedGemmConvKernel(p, {1, 8, 1, 8}, {{"Mul", 0, 0, true, {1, 8, 1, 8}}}, "auto").ok());
  // A dilated 2-D convolution: the built-in choice is the own kernel where oneDNN's is its im2col
  // and GEMM. (A Conv1d is the own 1-D convolution's: direct_conv1d_kernel_test.cpp.)
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"attr", {{"dilations", {2, 2}}, {"kernel_shape", {3, 3}}, {"pads", {2, 2, 2, 2}}}},
                                       {"input_desc", {{{"shape", {1, 64, 10, 10}}, {"type", "float32"}}, {{"shape", {64, 64, 3, 3}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {1, 64, 10, 10}}, {"type", "float32"}}}}},
                        0);
  REQUIRE_MESSAGE(op.ok(), op.status().message());
  const std::string policy = PolicyText(OneDnnImpl().DefaultPolicy(*op));
  CAPTURE(policy);
  // Where oneDNN has a kernel of its own for it (AVX-512), its direct convolution stays.
  const SearchSpace space = OneDnnImpl().Space(*op);
  const auto& impls = space.knobs[static_cast<size_t>(space.IndexOf("impl"))].values;
  const bool jit = std::any_of(impls.begin(), impls.end(), [](const KnobValue& v) {
    const std::string name = KnobValueText(v);
    return name != "default" && name.find("gemm") == std::string::npos;
  });
  CHECK(policy == (jit ? "algo=direct,impl=default,layout=auto" : "algo=packed_gemm,impl=default,layout=auto"));
  auto kernel = OneDnnImpl().Build(*op, OneDnnImpl().DefaultPolicy(*op));
  CHECK(kernel.ok());
}

TEST_CASE("own packed-GEMM convolution: a filter bank too large for the cache is the built-in choice's 'auto', timed against oneDNN's") {
  auto conv = [](int channels, int kernel) {
    auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                         {"attr", {{"kernel_shape", {kernel, kernel}}, {"strides", {2, 2}}}},
                                         {"input_desc", {{{"shape", {2, channels, 13, 13}}, {"type", "float32"}}, {{"shape", {12, channels, kernel, kernel}}, {"type", "float32"}}}},
                                         {"output_desc", {{{"shape", {2, 12, (13 - kernel) / 2 + 1, (13 - kernel) / 2 + 1}}, {"type", "float32"}}}}},
                          0);
    REQUIRE_MESSAGE(op.ok(), op.status().message());
    return *op;
  };
  // K = 129 * 81 = 10449: in chunks on AVX2's 16-column panels and AVX-512's 32.
  const OpSpec large = conv(129, 9), small = conv(16, 3);
  CHECK(OwnPackedGemmConvChunksFilters(AnalyzeConv(large).value()));
  CHECK_FALSE(OwnPackedGemmConvChunksFilters(AnalyzeConv(small).value()));
  CHECK(PolicyText(OneDnnImpl().DefaultPolicy(large)) == "algo=auto,impl=default,layout=auto");
  CHECK(PolicyText(OneDnnImpl().DefaultPolicy(small)) == "algo=direct,impl=default,layout=auto");
  // "auto" is in the op's space (a policy the bank can hold), and computes what oneDNN's direct one does.
  const SearchSpace space = OneDnnImpl().Space(large);
  const auto& algos = space.knobs[static_cast<size_t>(space.IndexOf("algo"))].values;
  CHECK(std::find(algos.begin(), algos.end(), KnobValue(std::string("auto"))) != algos.end());
  CHECK(space.valid(OneDnnImpl().DefaultPolicy(large)));
  if (space.IndexOf(kPrecisionKnob) >= 0)  // a CPU with bf16: the built-in choice's bf16 twin (oneDNN's) is in the space too
    CHECK(space.valid(space.With(OneDnnImpl().DefaultPolicy(large), kPrecisionKnob, std::string("bf16"))));
  std::vector<Tensor> in = {Tensor(large.inputs[0].shape), Tensor(large.inputs[1].shape)};
  for (size_t i = 0; i < in[0].data.size(); ++i) in[0].data[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  for (size_t i = 0; i < in[1].data.size(); ++i) in[1].data[i] = static_cast<float>(i % 5) * 0.01f - 0.02f;
  auto output_of = [&](const Policy& policy) {
    auto kernel = OneDnnImpl().Build(large, policy);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    REQUIRE((*kernel)->Prepare({&in[0], &in[1]}).ok());
    REQUIRE((*kernel)->Run().ok());
    Tensor out;
    REQUIRE((*kernel)->Fetch(&out).ok());
    return out;
  };
  const Tensor chosen = output_of(OneDnnImpl().DefaultPolicy(large));
  const Tensor direct = output_of(MakePolicy({{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string("auto")}}));
  REQUIRE(chosen.shape == direct.shape);
  double worst = 0;
  for (size_t i = 0; i < chosen.data.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(chosen.data[i] - direct.data[i])));
  CHECK(worst < 1e-3);
}

}  // namespace
}  // namespace tilebank::engine
