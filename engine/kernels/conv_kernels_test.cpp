// The float32 Conv and ConvTranspose (oneDNN's convolution and deconvolution) against the float64
// ones (the reference kernels, which oneDNN does not take) on the same values: grouped, dilated,
// strided, padded, output_padding and output_shape, in 1, 2 and 3 spatial dims.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

struct Case {
  std::string op_type;
  std::vector<int64_t> x_shape, w_shape;
  nlohmann::json attrs;
  bool bias = true;
};

TypedTensor Filled(std::vector<int64_t> shape, int seed) {
  TypedTensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(std::sin(0.37 * i + seed) * 0.5);
  return t;
}

// The node's output computed with inputs of `dtype`.
TypedTensor Run(const Case& c, DType dtype) {
  const int64_t M = c.op_type == "Conv" ? c.w_shape[0] : c.w_shape[1] * c.attrs.value("group", 1);
  std::vector<TypedTensor> operands = {Filled(c.x_shape, 1).CastTo(dtype), Filled(c.w_shape, 2).CastTo(dtype)};
  if (c.bias) operands.push_back(Filled({M}, 3).CastTo(dtype));
  KernelInfo info;
  info.op_type = c.op_type;
  info.node_name = c.op_type;
  info.attrs = Attrs(c.attrs);
  for (const TypedTensor& t : operands) info.input_types.push_back(t.dtype);
  auto kernel = KernelRegistry::Default().Create(info);
  REQUIRE(kernel.ok());
  KernelInputs in;
  for (const TypedTensor& t : operands) in.push_back(&t);
  std::vector<TypedTensor> out(1);
  const Status s = (*kernel)->Compute(in, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out[0];
}

TEST_CASE("float32 Conv and ConvTranspose (oneDNN) compute what the float64 reference kernels do") {
  using nlohmann::json;
  const std::vector<Case> cases = {
      {"ConvTranspose", {1, 8, 7, 9}, {8, 3, 3, 3}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}, {"group", 2}}},
      {"ConvTranspose", {2, 8, 5, 6}, {8, 3, 3, 3}, {{"strides", {2, 2}}, {"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}, {"group", 4}}, false},
      {"ConvTranspose", {1, 4, 11}, {4, 6, 5}, {{"strides", {3}}, {"pads", {1, 1}}, {"output_padding", {2}}}},
      {"ConvTranspose", {1, 4, 3, 4, 5}, {4, 2, 3, 3, 3}, {{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}, {"group", 2}}},
      {"ConvTranspose", {1, 3, 4, 4}, {3, 5, 3, 3}, {{"strides", {3, 3}}, {"output_shape", {13, 14}}}},
      {"ConvTranspose", {1, 3, 4, 4}, {3, 2, 2, 2}, {{"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}},
      {"Conv", {1, 6, 9, 8}, {9, 2, 3, 3}, {{"strides", {2, 1}}, {"pads", {1, 0, 1, 2}}, {"dilations", {1, 2}}, {"group", 3}}},
      {"Conv", {1, 4, 5, 6, 7}, {6, 4, 3, 3, 3}, {{"pads", {1, 1, 1, 1, 1, 1}}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op_type);
    CAPTURE(c.attrs.dump());
    const TypedTensor fast = Run(c, DType::kFloat32), reference = Run(c, DType::kFloat64);
    REQUIRE(fast.shape == reference.shape);
    REQUIRE(fast.size() > 0);
    double worst = 0;
    for (int64_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::abs(fast.At(i) - reference.At(i)));
    CHECK(worst < 1e-4);
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
