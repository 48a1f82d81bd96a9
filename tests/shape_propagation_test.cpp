// Shape arithmetic that ONNX 1.12's data propagation stops at (Range, Mod, Div, Where, Equal, as
// torch.onnx.export writes for attention heads and channel shuffles) is folded at load, so the
// shapes after it are known and the model runs and matches.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/ir/tensor_proto.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

// A float graph output of `rank` dimensions whose sizes are not declared.
void UndeclaredOutput(ModelBuilder* b, const std::string& name, int rank) {
  auto* out = b->g->add_output();
  out->set_name(name);
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d = 0; d < rank; ++d) tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(d));
}

void WriteFloats(const std::string& path, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  WriteFile(path, t.SerializeAsString());
}

// x [2,6,4] -> Gather(x, Range(0, dim 2), axis 2) -> Reshape to [dim 0, dim 1 / 2, -1] -> Relu,
// plus c [8] expanded to Where(Equal(t, -1), Shape(y), t) with t = [-1, dim 1 / 2, 8 - Mod(dim 1, dim 2) * 4]:
// out [2,3,8] = relu(x) + c[i % 8]. The output's dimensions are not declared.
ModelBuilder ShapeArithmetic() {
  ModelBuilder b;
  b.Input("x", {2, 6, 4});
  b.Weight("c", {8});
  b.Ints("i0", {0});
  b.Ints("i1", {1});
  b.Ints("i2", {2});
  b.Ints("minus_one", {-1});
  b.Ints("minus_ones", {-1, -1, -1});
  b.Ints("zero", {0});
  b.Ints("one", {1});
  b.Ints("two", {2});
  b.Ints("four", {4});
  b.Ints("eight", {8});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "i0"}, {"batch"});
  b.Node("Gather", {"s", "i1"}, {"rows"});
  b.Node("Gather", {"s", "i2"}, {"cols"});
  b.Node("Squeeze", {"zero"}, {"start"});
  b.Node("Squeeze", {"cols"}, {"limit"});
  b.Node("Squeeze", {"one"}, {"delta"});
  b.Node("Range", {"start", "limit", "delta"}, {"columns"});
  ModelBuilder::IntAttr(b.Node("Gather", {"x", "columns"}, {"x2"}), "axis", 2);
  b.Node("Div", {"rows", "two"}, {"half"});
  ModelBuilder::IntAttr(b.Node("Concat", {"batch", "half", "minus_one"}, {"new_shape"}), "axis", 0);
  b.Node("Reshape", {"x2", "new_shape"}, {"y"});
  b.Node("Relu", {"y"}, {"r"});
  b.Node("Mod", {"rows", "cols"}, {"rem"});  // 6 mod 4 = 2
  b.Node("Mul", {"rem", "four"}, {"rem4"});
  b.Node("Sub", {"eight", "rem4"}, {"zero_from_mod"});  // 0
  b.Node("Add", {"zero_from_mod", "eight"}, {"last"});  // 8
  ModelBuilder::IntAttr(b.Node("Concat", {"minus_one", "half", "last"}, {"t"}), "axis", 0);
  b.Node("Equal", {"t", "minus_ones"}, {"is_free"});
  b.Node("Shape", {"y"}, {"sy"});
  b.Node("Where", {"is_free", "sy", "t"}, {"target"});
  b.Node("Expand", {"c", "target"}, {"e"});
  b.Node("Add", {"r", "e"}, {"out"});
  UndeclaredOutput(&b, "out", 3);
  return b;
}

TEST_CASE("shape arithmetic ONNX does not propagate is folded at load: the model runs and matches") {
  TempDir dir;
  ModelBuilder b = ShapeArithmetic();
  const auto& c = b.g->initializer(0);
  std::vector<float> x(48), expected(48);
  for (int i = 0; i < 48; ++i) {
    x[i] = static_cast<float>((i * 37) % 11) - 5.f;
    expected[i] = std::max(x[i], 0.f) + c.float_data(i % 8);
  }
  const std::string model = b.Save(dir / "arith.onnx");
  std::filesystem::create_directories(dir / "data");
  WriteFloats(dir / "data/input_0.pb", {2, 6, 4}, x);
  WriteFloats(dir / "data/output_0.pb", {2, 3, 8}, expected);
  auto r = RunCli("run -m " + model + " --repeat 1 --warmup 0 --bank " + (dir / "none") + " --data " + (dir / "data") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err << r.out);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["check"]["ok"] == true);
}

TEST_CASE("a shape that depends on input data, not on input shapes, is known per run: the model runs at each") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {2, 6});
  b.Input("new_shape", {2});
  b.g->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  b.Node("Reshape", {"x", "new_shape"}, {"r"});
  b.Node("Relu", {"r"}, {"y"});
  UndeclaredOutput(&b, "y", 2);
  const std::string model = b.Save(dir / "data_shape.onnx");
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i % 5) - 2.f;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{3, 4}, {4, 3}, {1, 12}}) {
    const std::string data = dir / ("data" + std::to_string(shape[0]));
    std::filesystem::create_directories(data);
    WriteFloats(data + "/input_0.pb", {2, 6}, x);
    std::ofstream(data + "/input_1.pb", std::ios::binary) << engine::model::ProtoFromTensor("new_shape", engine::TypedTensor::Of<int64_t>({2}, shape)).SerializeAsString();
    std::vector<float> relu(12);
    for (int i = 0; i < 12; ++i) relu[i] = std::max(x[i], 0.f);
    WriteFloats(data + "/output_0.pb", shape, relu);
    auto r = RunCli("run -m " + model + " --repeat 1 --warmup 0 --bank " + (dir / "none") + " --data " + data + " --json --profile");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["check"]["ok"] == true);
    CHECK(j["profile"][0]["shape"] == "?");  // known only when it runs
  }
}

}  // namespace
}  // namespace tilebank::testing
