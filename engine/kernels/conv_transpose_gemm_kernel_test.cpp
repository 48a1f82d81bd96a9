// ConvTranspose as one GEMM and the scatter of its taps against the reference kernel, on instances
// whose taps overlap or fall outside the output (strides under the kernel, pads, dilations,
// output_padding, output_shape; 1-3 spatial dims, two images, with and without the bias; weights
// given per run or constant, then packed once), the GEMM chosen by a rival that cannot be made; and the choice left to oneDNN's deconvolution where the
// kernel is given none to time against.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/kernels/conv_kernels.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/kernel_test_values.h"

namespace tilebank::engine::kernels {
namespace {

struct Instance {
  std::vector<int64_t> x, w, y;
  nlohmann::json attrs;
  bool bias;
};

KernelInfo InfoOf(const Instance& c) {
  KernelInfo info;
  info.op_type = info.node_name = "ConvTranspose";
  info.attrs = Attrs(c.attrs);
  info.num_outputs = 1;
  info.input_types.assign(c.bias ? 3 : 2, DType::kFloat32);
  info.input_shapes = {c.x, c.w};
  if (c.bias) info.input_shapes.push_back(std::vector<int64_t>{c.w[1]});
  info.output_shapes = {c.y};
  return info;
}

TEST_CASE("ConvTranspose by GEMM: overlapping and clipped taps added where they land, as the reference computes") {
  const std::vector<Instance> cases = {
      {{2, 6, 4, 4}, {6, 3, 4, 4}, {2, 3, 8, 8}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, true},  // a DCGAN layer
      {{1, 4, 5, 6}, {4, 5, 3, 3}, {1, 5, 10, 12}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}, false},
      {{1, 3, 5, 4}, {3, 2, 3, 3}, {1, 2, 9, 6}, {{"strides", {1, 1}}, {"pads", {0, 1, 0, 1}}, {"dilations", {2, 2}}}, true},
      {{2, 3, 9}, {3, 4, 5}, {2, 4, 18}, {{"strides", {2}}, {"pads", {1, 2}}}, true},                               // 1-D, asymmetric pads
      {{1, 2, 3, 4, 3}, {2, 3, 3, 3, 3}, {1, 3, 5, 7, 5}, {{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}}, true},  // 3-D
      {{1, 3, 4, 4}, {3, 5, 3, 3}, {1, 5, 13, 14}, {{"strides", {3, 3}}, {"output_shape", {13, 14}}}, true},
      {{1, 5, 1, 1}, {5, 7, 4, 4}, {1, 7, 4, 4}, nlohmann::json::object(), false}};  // one pixel: a DCGAN's first layer
  for (const Instance& c : cases)
    for (bool constant_weights : {false, true}) {  // constant: packed on the first run (PackedTransposedGemm)
      CAPTURE(c.attrs.dump());
      CAPTURE(constant_weights);
      KernelInfo info = InfoOf(c);
      const auto w = std::make_shared<const TypedTensor>(SineValues(c.w, 2));
      if (constant_weights) {
        info.constant_input = {false, true, false};
        info.constant_inputs = {nullptr, w};
      }
      auto reference = KernelRegistry::Default().Create(info, "reference");
      REQUIRE(reference.ok());
      auto unmade = [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> { return Status::InvalidInput("no rival"); };
      auto gemm = MakeConvTransposeByGemm(info, nullptr, unmade);
      REQUIRE(gemm.ok());
      REQUIRE(*gemm);  // not the (null) fallback: the GEMM took the instance
      const TypedTensor x = SineValues(c.x, 1), b = SineValues({c.w[1]}, 3);
      const KernelInputs in = {&x, w.get(), c.bias ? &b : nullptr};
      std::vector<TypedTensor> want(1), got(1);
      REQUIRE((*reference)->Compute(in, &want).ok());
      for (int run = 0; run < 2; ++run) {
        REQUIRE((*gemm)->Compute(in, &got).ok());
        REQUIRE(got[0].shape == c.y);
        REQUIRE(want[0].shape == c.y);
        double worst = 0;
        for (int64_t i = 0; i < want[0].size(); ++i) worst = std::max(worst, std::abs(got[0].At(i) - want[0].At(i)));
        CHECK(worst < 1e-5);
      }
    }
}

TEST_CASE("ConvTranspose by GEMM: an overlapping instance with no rival to time goes to the fallback") {
  const Instance c{{1, 6, 4, 4}, {6, 3, 4, 4}, {1, 3, 8, 8}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, false};
  auto fallback = KernelRegistry::Default().Create(InfoOf(c), "reference");
  REQUIRE(fallback.ok());
  const OpKernel* given = fallback->get();
  auto made = MakeConvTransposeByGemm(InfoOf(c), std::move(fallback.value()));
  REQUIRE(made.ok());
  CHECK(made->get() == given);
}

}  // namespace
}  // namespace tilebank::engine::kernels
