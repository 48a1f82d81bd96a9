// FusedConv's oneDNN kernel (the convolution with the residual's sum and the activation as post-ops)
// against its reference (the reference Conv, then the residual and the activation in double): 1-D,
// 2-D with asymmetric pads and 3-D, grouped and dilated, with and without the bias and the residual,
// every activation; a residual of another shape is refused by both. Of static shape, with constant
// weights packed ahead, it computes over the caller's buffers (ComputeOnBuffers) what Compute
// computes, and declines before its weights are packed; a bias computed at run time is read at
// every call (weights packed ahead from shapes alone, as a run-only load passes them).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

TypedTensor ConvValues(std::vector<int64_t> shape, int seed) {
  TypedTensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(std::sin(0.37 * i + seed) * 1.5);
  return t;
}

struct ConvCase {
  std::vector<int64_t> x, w, y;
  nlohmann::json attrs;
};

TEST_CASE("FusedConv: oneDNN's convolution with the residual and activation as post-ops computes what the reference does") {
  const std::vector<ConvCase> cases = {
      {{1, 6, 30}, {8, 3, 3}, {1, 8, 32}, {{"group", 2}, {"dilations", {2}}, {"pads", {4, 2}}}},                         // 1-D, causal-like
      {{1, 4, 9, 8}, {6, 4, 3, 3}, {1, 6, 8, 7}, {{"pads", {0, 0, 1, 1}}}},                                                // 2-D, asymmetric
      {{1, 3, 5, 6, 6}, {4, 3, 3, 3, 3}, {1, 4, 5, 3, 3}, {{"pads", {1, 1, 1, 1, 1, 1}}, {"strides", {1, 2, 2}}}},        // 3-D, strided
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const ConvCase& c = cases[k];
    for (const char* activation : {"", "Relu", "Sigmoid", "Tanh", "Gelu", "GeluTanh", "Swish"}) {
      for (bool bias : {false, true}) {
        for (bool residual : {false, true}) {
          CAPTURE(k);
          CAPTURE(activation);
          CAPTURE(bias);
          CAPTURE(residual);
          KernelInfo info;
          info.op_type = "FusedConv";
          info.node_name = "fused";
          nlohmann::json attrs = c.attrs;
          attrs["activation"] = activation;
          info.attrs = Attrs(attrs);
          info.input_types = {DType::kFloat32, DType::kFloat32, bias ? DType::kFloat32 : DType::kUndefined};
          if (residual) info.input_types.push_back(DType::kFloat32);
          info.constant_input = {false, true, bias, false};
          const TypedTensor x = ConvValues(c.x, 1), w = ConvValues(c.w, 2), b = ConvValues({c.w[0]}, 3), z = ConvValues(c.y, 4);
          KernelInputs in = {&x, &w, bias ? &b : nullptr};
          if (residual) in.push_back(&z);
          auto fast = KernelRegistry::Default().Create(info, "onednn");
          auto reference = KernelRegistry::Default().Create(info, "reference");
          REQUIRE(fast.ok());
          REQUIRE(reference.ok());
          for (int call = 0; call < 2; ++call) {  // the second call reuses the first's primitive and output buffer
            std::vector<TypedTensor> got(1), want(1);
            REQUIRE((*fast)->Compute(in, &got).ok());
            REQUIRE((*reference)->Compute(in, &want).ok());
            REQUIRE(got[0].shape == c.y);
            REQUIRE(want[0].shape == c.y);
            double worst = 0;
            for (int64_t i = 0; i < got[0].size(); ++i) worst = std::max(worst, std::fabs(got[0].At(i) - want[0].At(i)));
            CHECK(worst < 1e-4);
          }
        }
      }
    }
  }
}

TEST_CASE("FusedConv: a residual of another shape than the output is refused") {
  KernelInfo info;
  info.op_type = "FusedConv";
  info.node_name = "fused";
  info.attrs = Attrs(nlohmann::json{{"activation", "Relu"}});
  info.input_types = {DType::kFloat32, DType::kFloat32, DType::kUndefined, DType::kFloat32};
  const TypedTensor x = ConvValues({1, 2, 10}, 1), w = ConvValues({3, 2, 3}, 2), z = ConvValues({1, 3, 10}, 3);  // y is [1, 3, 8]
  for (const char* implementation : {"onednn", "reference"}) {
    CAPTURE(implementation);
    auto kernel = KernelRegistry::Default().Create(info, implementation);
    REQUIRE(kernel.ok());
    std::vector<TypedTensor> out(1);
    const Status s = (*kernel)->Compute({&x, &w, nullptr, &z}, &out);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("residual") != std::string::npos);
  }
}

// A 3-D FusedConv (Relu after it) of static shapes with constant weights and a bias, constant or
// computed at run time: what the executor makes for a registry step that packs its weights at load.
const ConvCase kStatic3d = {{1, 3, 5, 6, 6}, {4, 3, 3, 3, 3}, {1, 4, 5, 3, 3}, {{"pads", {1, 1, 1, 1, 1, 1}}, {"strides", {1, 2, 2}}}};
KernelInfo Static3dFusedConv(bool constant_bias) {
  const ConvCase& c = kStatic3d;
  KernelInfo info;
  info.op_type = "FusedConv";
  info.node_name = "fused";
  nlohmann::json attrs = c.attrs;
  attrs["activation"] = "Relu";
  info.attrs = Attrs(attrs);
  info.input_types = {DType::kFloat32, DType::kFloat32, DType::kFloat32};
  info.input_shapes = {c.x, c.w, std::vector<int64_t>{c.w[0]}};
  info.constant_input = {false, true, constant_bias, false};
  return info;
}

TEST_CASE("FusedConv: of static shape, with its weights packed ahead, it computes over the caller's buffers what Compute does") {
  const ConvCase& c = kStatic3d;
  for (bool residual : {false, true}) {
    CAPTURE(residual);
    KernelInfo info = Static3dFusedConv(/*constant_bias=*/true);
    if (residual) info.input_types.push_back(DType::kFloat32), info.input_shapes.push_back(c.y);
    const TypedTensor x = ConvValues(c.x, 1), w = ConvValues(c.w, 2), b = ConvValues({c.w[0]}, 3), z = ConvValues(c.y, 4);
    KernelInputs in = {&x, &w, &b};
    if (residual) in.push_back(&z);
    auto kernel = KernelRegistry::Default().Create(info, "onednn");
    REQUIRE(kernel.ok());
    std::vector<float> on_buffers(static_cast<size_t>(Tensor::NumElements(c.y)), -1.f);
    std::vector<const float*> buffers = {x.data<float>(), nullptr, nullptr};  // constants: null, as the executor passes them
    if (residual) buffers.push_back(z.data<float>());
    CHECK_FALSE((*kernel)->ComputeOnBuffers(buffers, on_buffers.data()));  // nothing packed yet
    (*kernel)->PrepareAhead(in);
    REQUIRE((*kernel)->ComputeOnBuffers(buffers, on_buffers.data()));
    std::vector<TypedTensor> computed(1);
    REQUIRE((*kernel)->Compute(in, &computed).ok());
    REQUIRE(computed[0].size() == static_cast<int64_t>(on_buffers.size()));
    int differ = 0;
    for (size_t i = 0; i < on_buffers.size(); ++i) differ += on_buffers[i] != computed[0].data<float>()[i];
    CHECK(differ == 0);
  }
}

TEST_CASE("FusedConv: a bias computed at run time is read at every call, over buffers or tensors, its weights packed ahead from shapes alone") {
  const ConvCase& c = kStatic3d;
  const KernelInfo info = Static3dFusedConv(/*constant_bias=*/false);
  const TypedTensor x = ConvValues(c.x, 1), w = ConvValues(c.w, 2);
  auto kernel = KernelRegistry::Default().Create(info, "onednn");
  auto reference = KernelRegistry::Default().Create(info, "reference");
  REQUIRE(kernel.ok());
  REQUIRE(reference.ok());
  TypedTensor shape_only_x(DType::kFloat32, {}), shape_only_bias(DType::kFloat32, {});  // what a run-only load passes ahead
  shape_only_x.shape = c.x;
  shape_only_bias.shape = {c.w[0]};
  (*kernel)->PrepareAhead({&shape_only_x, &w, &shape_only_bias});
  for (int seed : {3, 5, 3}) {
    CAPTURE(seed);
    const TypedTensor b = ConvValues({c.w[0]}, seed);
    std::vector<TypedTensor> want(1), computed(1);
    REQUIRE((*reference)->Compute({&x, &w, &b}, &want).ok());
    std::vector<float> on_buffers(static_cast<size_t>(Tensor::NumElements(c.y)), -1.f);
    REQUIRE((*kernel)->ComputeOnBuffers({x.data<float>(), nullptr, b.data<float>()}, on_buffers.data()));
    REQUIRE((*kernel)->Compute({&x, &w, &b}, &computed).ok());
    double worst = 0;
    for (size_t i = 0; i < on_buffers.size(); ++i)
      worst = std::max({worst, std::fabs(on_buffers[i] - want[0].At(static_cast<int64_t>(i))), std::fabs(computed[0].At(static_cast<int64_t>(i)) - want[0].At(static_cast<int64_t>(i)))});
    CHECK(worst < 1e-4);
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
