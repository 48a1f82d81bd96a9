// `run --data` judges outputs as ONNX's backend runner does (engine/core/tensor_compare.h): an output
// of the right element count but the wrong shape, the wrong dtype, a value off by more than rtol
// 1e-3 + atol 1e-7 (or, past that atol, 1e-5 of the output's largest value), or an expected output
// the model does not have, is a difference (exit 1); within the tolerances it matches (exit 0).
#include <doctest/doctest.h>

#include <filesystem>

#include "engine/ir/tensor_proto.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

using engine::DType;
using engine::TypedTensor;

// x [2,3] -> Relu -> y; its test data: x = 0..5 (Relu leaves it as it is) and `expected` as y.
CommandResult RunWith(const TempDir& dir, const std::string& name, const std::vector<TypedTensor>& expected) {
  ModelBuilder b;
  b.Input("x", {2, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {2, 3});
  const std::string model = b.Save(dir / (name + ".onnx")), data = dir / name;
  std::filesystem::create_directories(data);
  const TypedTensor x = TypedTensor::Of<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  WriteFile(data + "/input_0.pb", engine::model::ProtoFromTensor("x", x).SerializeAsString());
  for (size_t i = 0; i < expected.size(); ++i)
    WriteFile(data + "/output_" + std::to_string(i) + ".pb", engine::model::ProtoFromTensor("y", expected[i]).SerializeAsString());
  return RunCli("run -m " + model + " --data " + data + " --repeat 1 --warmup 0");
}

TEST_CASE("run --data: outputs judged by dtype, shape and ONNX's tolerances") {
  TempDir dir;
  const std::vector<float> y = {0, 1, 2, 3, 4, 5};
  CHECK(RunWith(dir, "same", {TypedTensor::Of<float>({2, 3}, y)}).exit_code == 0);

  // Within rtol 1e-3 (5.004 against 5) and atol 1e-7 (0.00000005 against 0): a match.
  CHECK(RunWith(dir, "within", {TypedTensor::Of<float>({2, 3}, {5e-8f, 1, 2, 3, 4, 5.004f})}).exit_code == 0);

  auto transposed = RunWith(dir, "transposed", {TypedTensor::Of<float>({3, 2}, y)});  // the same six values
  CHECK(transposed.exit_code == 1);
  CHECK_MESSAGE(transposed.out.find("shape 2x3 where 3x2 was expected") != std::string::npos, transposed.out);

  auto flat = RunWith(dir, "flat", {TypedTensor::Of<float>({6}, y)});
  CHECK(flat.exit_code == 1);
  CHECK_MESSAGE(flat.out.find("shape 2x3 where 6 was expected") != std::string::npos, flat.out);

  auto wide = RunWith(dir, "dtype", {TypedTensor::Of<double>({2, 3}, {0, 1, 2, 3, 4, 5})});
  CHECK(wide.exit_code == 1);
  CHECK_MESSAGE(wide.out.find("dtype float32 where float64 was expected") != std::string::npos, wide.out);

  auto relative = RunWith(dir, "relative", {TypedTensor::Of<float>({2, 3}, {0, 1, 2, 3, 4, 5.01f})});  // 2e-3 off
  CHECK(relative.exit_code == 1);
  CHECK_MESSAGE(relative.out.find("element 5") != std::string::npos, relative.out);

  // 0 where 1e-4: beyond atol 1e-7, and beyond 1e-5 of the output's largest value (5).
  auto absolute = RunWith(dir, "absolute", {TypedTensor::Of<float>({2, 3}, {1e-4f, 1, 2, 3, 4, 5})});
  CHECK(absolute.exit_code == 1);
  CHECK_MESSAGE(absolute.out.find("element 0") != std::string::npos, absolute.out);
  CHECK(absolute.out.find("float32 rounding") == std::string::npos);

  // 0 where 1e-6: beyond atol 1e-7 but within 1e-5 of 5, float32's rounding of sums that size
  // (a transformer's logits near zero miss ONNX's atol so, in ONNX Runtime as well): a match, said.
  auto rounding = RunWith(dir, "rounding", {TypedTensor::Of<float>({2, 3}, {1e-6f, 1, 2, 3, 4, 5})});
  CHECK_MESSAGE(rounding.exit_code == 0, rounding.out);
  CHECK_MESSAGE(rounding.out.find("float32 rounding: some elements beyond ONNX's atol 1e-7, within 1e-5 of the output's largest") != std::string::npos,
                rounding.out);

  auto extra = RunWith(dir, "extra", {TypedTensor::Of<float>({2, 3}, y), TypedTensor::Of<float>({2, 3}, y)});
  CHECK(extra.exit_code == 1);
  CHECK_MESSAGE(extra.out.find("expects more") != std::string::npos, extra.out);
}

}  // namespace
}  // namespace tilebank::testing
