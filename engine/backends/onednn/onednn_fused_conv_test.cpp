// impl.onednn's convolution with a chain SGAT fused into it: a chain ending in Swish (or in Tanh,
// where oneDNN runs without AVX-512) runs it as an own pass over a large output (from 2^12 values)
// and as oneDNN's post-op below; both, after a residual Add or alone, compute the convolution in
// double, on the measured path and the direct one (NCHW).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backends/measured_choice_cache.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {
namespace {

using namespace own_conv_test;

TEST_CASE("impl.onednn convolution: a fused Swish or Tanh, as an own pass over a large output or a post-op, computes the chain") {
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa()), avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  for (const std::string activation : {"Swish", "Tanh"})
  for (int side : {64, 4}) {  // 64x64x64 values: the own pass; 4x4x64 (2^10): the post-op
    CAPTURE(activation);
    CAPTURE(side);
    const bool own = side == 64 && (activation == "Swish" || (isa & avx512) != avx512);
    ConvProblem p;
    p.N = 1, p.C = 16, p.H = p.W = side, p.OC = 64, p.OH = p.OW = side, p.KH = p.KW = 1, p.Cg = 16, p.OCg = 64, p.bias = true;
    const std::vector<int64_t> in_shape = {1, 16, side, side}, out_shape = {1, 64, side, side};
    auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                         {"input_desc", {{{"shape", in_shape}, {"type", "float32"}}, {{"shape", {64, 16, 1, 1}}, {"type", "float32"}},
                                                         {{"shape", {64}}, {"type", "float32"}}}},
                                         {"output_desc", {{{"shape", out_shape}, {"type", "float32"}}}}},
                          0);
    REQUIRE(op.ok());
    const std::vector<float> x = Values(16 * side * side, 1), w = Values(64 * 16, 2), b = Values(64, 3), z = Values(64 * side * side, 4);
    Tensor input(in_shape), weights({64, 16, 1, 1}), bias({64}), residual(out_shape);
    input.data = x, weights.data = w, bias.data = b, residual.data = z;
    for (bool with_residual : {false, true}) {
      CAPTURE(with_residual);
      const std::vector<double> want = Reference(p, x, w, b, with_residual ? z : std::vector<float>{}, activation);
      const std::vector<ChainStep> chain = Epilogue(with_residual, activation, out_shape);
      // The measured path.
      auto measured = OneDnnFusedKernel(*op, chain);
      REQUIRE_MESSAGE(measured.ok(), measured.status().message());
      std::vector<const Tensor*> all = {&input, &weights, &bias};
      if (with_residual) all.push_back(&residual);
      REQUIRE((*measured)->Prepare(all).ok());
      REQUIRE((*measured)->Run().ok());
      Tensor got;
      REQUIRE((*measured)->Fetch(&got).ok());
      CHECK(WorstError(got.data, want) < 1e-5);
      // The direct path, NCHW on both sides (the layouts chosen at bind).
      auto kernel = OneDnnFusedKernel(*op, chain);
      REQUIRE(kernel.ok());
      std::vector<const Tensor*> constants = {nullptr, &weights, &bias};
      if (with_residual) constants.push_back(nullptr);
      auto bound = (*kernel)->BindDirect({}, constants);
      REQUIRE(bound.ok());
      REQUIRE(*bound);
      std::vector<const float*> in = {x.data(), nullptr, nullptr};
      if (with_residual) in.push_back(z.data());
      std::vector<float> y(want.size());
      REQUIRE((*kernel)->RunDirect(in, y.data()).ok());
      CHECK(WorstError(y, want) < 1e-5);
      CHECK(((*kernel)->Identity().find("own " + activation) != std::string::npos) == own);
      CHECK(((*measured)->Identity().find("own " + activation) != std::string::npos) == own);
      // Another layout is another kernel: NCHW and NHWC activations have different identities.
      auto layout = [&](const char* name) {
        auto k = OneDnnFusedKernel(*op, chain, {{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string(name)}});
        REQUIRE(k.ok());
        REQUIRE((*k)->BindDirect({}, constants).ok());
        return (*k)->Identity();
      };
      const std::string plain = layout("plain"), nhwc = layout("nhwc");
      CHECK_FALSE(plain.empty());
      CHECK(plain != nhwc);
    }
  }
}

TEST_CASE("impl.onednn convolution: a fused Mul by a whole tensor never takes oneDNN off its JIT convolution") {
  // A 3x3 convolution every x86 ISA has a JIT kernel for; with Sigmoid and a Mul by a tensor of the
  // output's shape fused (a ConvGRU's reset gate), oneDNN without AVX-512 has only its im2col and
  // GEMM one: the kernel refuses the chain there, and computes it where it binds.
  ConvProblem p;
  p.N = 1, p.C = 16, p.H = p.W = 16, p.OC = 16, p.OH = p.OW = 16, p.KH = p.KW = 3, p.Cg = 16, p.OCg = 16, p.ph = p.pw = p.ph_end = p.pw_end = 1, p.bias = true;
  const std::vector<int64_t> in_shape = {1, 16, 16, 16}, out_shape = {1, 16, 16, 16};
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"input_desc", {{{"shape", in_shape}, {"type", "float32"}}, {{"shape", {16, 16, 3, 3}}, {"type", "float32"}},
                                                       {{"shape", {16}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", out_shape}, {"type", "float32"}}}},
                                       {"attr", {{{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}}}}},
                        0);
  REQUIRE(op.ok());
  const std::vector<float> x = Values(16 * 16 * 16, 1), w = Values(16 * 16 * 9, 2), b = Values(16, 3), h = Values(16 * 16 * 16, 4);
  Tensor weights({16, 16, 3, 3}), bias({16});
  weights.data = w, bias.data = b;
  const std::vector<ChainStep> chain = {{"Sigmoid", 0, 0, false, {}}, {"Mul", 0, 0, true, out_shape}};
  auto kernel = OneDnnFusedKernel(*op, chain);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  auto bound = (*kernel)->BindDirect({}, {nullptr, &weights, &bias, nullptr});
  if (!bound.ok()) return;  // refused: the model runs a shorter chain
  REQUIRE(*bound);
  CHECK((*kernel)->Identity().find("gemm") == std::string::npos);
  std::vector<double> want = Reference(p, x, w, b, {}, "Sigmoid");
  for (size_t i = 0; i < want.size(); ++i) want[i] *= h[i];
  std::vector<float> y(want.size());
  REQUIRE((*kernel)->RunDirect({x.data(), nullptr, nullptr, h.data()}, y.data()).ok());
  CHECK(WorstError(y, want) < 1e-5);
}

TEST_CASE("impl.onednn convolution: weights and bias the model computes, and a constant source, on the direct path in each layout") {
  // StyleGAN's modulated convolutions: the weights are a run-time value, read where they are (NCHW's
  // GEMM kernel takes OIHW) or reordered on each run; its first one reads a learned constant input.
  ConvProblem p;
  p.N = 1, p.C = 24, p.H = p.W = 9, p.OC = 40, p.OH = p.OW = 9, p.KH = p.KW = 3, p.ph = p.pw = p.ph_end = p.pw_end = 1, p.Cg = 24, p.OCg = 40, p.bias = true;
  const std::vector<int64_t> in_shape = {1, 24, 9, 9}, w_shape = {40, 24, 3, 3}, out_shape = {1, 40, 9, 9};
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"input_desc", {{{"shape", in_shape}, {"type", "float32"}}, {{"shape", w_shape}, {"type", "float32"}},
                                                       {{"shape", {40}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", out_shape}, {"type", "float32"}}}},
                                       {"attr", {{{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}}}}},
                        0);
  REQUIRE(op.ok());
  Tensor input(in_shape), bias({40});
  input.data = Values(24 * 81, 1), bias.data = Values(40, 3);
  for (const char* layout : {"auto", "plain", "nhwc"})
    for (bool constant_source : {false, true}) {
      CAPTURE(layout);
      CAPTURE(constant_source);
      auto kernel = OneDnnFusedKernel(*op, Epilogue(false, "Relu", out_shape), {{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string(layout)}});
      REQUIRE(kernel.ok());
      auto bound = (*kernel)->BindDirect({in_shape, w_shape, {40}}, {constant_source ? &input : nullptr, nullptr, nullptr});
      REQUIRE_MESSAGE(bound.ok(), bound.status().message());
      REQUIRE(*bound);
      for (uint32_t seed : {5u, 6u}) {  // new weights and bias on each run
        const std::vector<float> w = Values(40 * 24 * 9, seed), b = Values(40, seed + 10);
        const std::vector<double> want = Reference(p, input.data, w, b, {}, "Relu");
        std::vector<float> y(want.size());
        REQUIRE((*kernel)->RunDirect({constant_source ? nullptr : input.data.data(), w.data(), b.data()}, y.data()).ok());
        CHECK(WorstError(y, want) < 1e-4);
      }
    }
}

TEST_CASE("impl.onednn convolution: a 1-D dilated causal convolution whose padding the plain JIT kernel refuses takes it in a padded source of its own") {
  // A WaveNet layer: 16 -> 24 channels over 300 steps, kernel 2, dilation 32, the causal padding
  // (32 on the left) that oneDNN's plain JIT kernel refuses. Where it has that kernel (AVX-512), the
  // remembered choices are set to it with the padding in the source, in its own layouts; elsewhere
  // oneDNN's default binds.
  // Both paths, the direct one run twice (the zero borders stay), compute the convolution in double.
  ConvProblem p;
  p.N = 1, p.C = 16, p.H = 1, p.W = 300, p.OC = 24, p.OH = 1, p.OW = 300, p.KH = 1, p.KW = 2, p.Cg = 16, p.OCg = 24, p.dw = 32, p.pw = 32, p.bias = true;
  const std::vector<int64_t> in_shape = {1, 16, 1, 300}, w_shape = {24, 16, 1, 2}, out_shape = {1, 24, 1, 300};
  auto op = ParseOpSpec(nlohmann::json{{"op", "Conv"},
                                       {"input_desc", {{{"shape", in_shape}, {"type", "float32"}}, {{"shape", w_shape}, {"type", "float32"}},
                                                       {{"shape", {24}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", out_shape}, {"type", "float32"}}}},
                                       {"attr", {{{"name", "pads"}, {"type", "list_int"}, {"value", {0, 32, 0, 0}}},
                                                 {{"name", "dilations"}, {"type", "list_int"}, {"value", {1, 32}}}}}},
                        0);
  REQUIRE_MESSAGE(op.ok(), op.status().message());
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa()), avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  const bool plain_jit = (isa & avx512) == avx512;
  const std::string layout_key = "onednn conv layout v1|1,16,1,300->24,1,300|k1x2,g1,s1x1,d1x32,p0x32+0x0,b1|default,direct,fp32";
  if (plain_jit) {  // its own (blocked) layouts, not NCHW's GEMM, which may win the timing at this size
    RememberMeasuredChoice("onednn conv 1-D impl v4|" + layout_key, "jit:avx512_core, padded source");
    RememberMeasuredChoice(layout_key, "blocked");
  }
  const std::vector<float> w = Values(24 * 16 * 2, 2), b = Values(24, 3);
  Tensor weights(w_shape), bias({24});
  weights.data = w, bias.data = b;
  // oneDNN's convolution (the built-in "auto" may take the own 1-D convolution instead).
  auto kernel = OneDnnFusedKernel(*op, {}, MakePolicy({{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string("auto")}}));
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  auto bound = (*kernel)->BindDirect({}, {nullptr, &weights, &bias});
  REQUIRE_MESSAGE(bound.ok(), bound.status().message());
  REQUIRE(*bound);
  if (plain_jit) {
    CHECK_MESSAGE((*kernel)->Identity().find("jit:avx512_core") != std::string::npos, (*kernel)->Identity());
    CHECK((*kernel)->NativeLayout(0).row_major());  // its padded source is no neighbour's to write
  }
  for (uint32_t seed : {1u, 4u}) {
    const std::vector<float> x = Values(16 * 300, seed);
    const std::vector<double> want = Reference(p, x, w, b, {}, "");
    std::vector<float> y(want.size());
    REQUIRE((*kernel)->RunDirect({x.data(), nullptr, nullptr}, y.data()).ok());
    CHECK(WorstError(y, want) < 1e-5);
    // The measured path.
    Tensor input(in_shape);
    input.data = x;
    auto measured = OneDnnFusedKernel(*op, {});
    REQUIRE(measured.ok());
    REQUIRE((*measured)->Prepare({&input, &weights, &bias}).ok());
    REQUIRE((*measured)->Run().ok());
    Tensor got;
    REQUIRE((*measured)->Fetch(&got).ok());
    CHECK(WorstError(got.data, want) < 1e-5);
  }
}

}  // namespace
}  // namespace tilebank::engine
