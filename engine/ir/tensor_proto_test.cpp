// TensorProto <-> TypedTensor over every tensor file of ONNX's own test data (libonnx-testdata):
// each reads, writes and reads back the same, float32 ones agree with ReadFloatTensorFile, and the
// typed fields ONNX stores small types in are read as raw data is.
#include "engine/ir/tensor_proto.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>

namespace tilebank::engine::model {
namespace {

TEST_CASE("tensor proto: every test-data tensor of libonnx-testdata reads, writes and reads back the same") {
  const std::filesystem::path root = "/usr/share/libonnx-testdata/data";
  REQUIRE_MESSAGE(std::filesystem::is_directory(root), "install libonnx-testdata (scripts/setup.sh does)");
  std::map<std::string, int> by_dtype;
  int read = 0, refused = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".pb" || entry.path().parent_path().filename().string().rfind("test_data_set", 0) != 0) continue;
    auto t = ReadTensorFile(entry.path().string());
    if (!t.ok()) {  // sequences, maps and optionals are not TensorProtos; complex numbers are refused
      ++refused;
      continue;
    }
    ++read;
    ++by_dtype[DTypeName(t->dtype)];
    auto again = TensorFromProto(ProtoFromTensor("t", *t));
    REQUIRE_MESSAGE(again.ok(), again.status().message());
    CHECK_MESSAGE(*again == *t, entry.path().string());
    if (t->dtype == DType::kFloat32) {
      auto f = ReadFloatTensorFile(entry.path().string());
      REQUIRE(f.ok());
      CHECK(TypedTensor::FromFloat(*f) == *t);
    }
  }
  for (const auto& [name, n] : by_dtype) MESSAGE(name << ": " << n);
  MESSAGE(read << " tensors read, " << refused << " files are not tensors tilebank reads");
  CHECK(read > 2500);  // (the test data holds no bfloat16 tensor; the typed-field test below reads float16)
  for (const char* d : {"float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                        "uint64", "bool", "string"})
    CHECK_MESSAGE(by_dtype[d] > 0, d);
}

TEST_CASE("tensor proto: the typed fields read as raw data does, and a size that disagrees is refused") {
  onnx::TensorProto p;
  p.set_name("h");
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(Float16(1.5f).bits);
  p.add_int32_data(Float16(-3.f).bits);
  auto t = TensorFromProto(p);
  REQUIRE(t.ok());
  CHECK(t->At(0) == 1.5);
  CHECK(t->At(1) == -3.0);
  CHECK(*TensorFromProto(ProtoFromTensor("h", *t)) == *t);

  onnx::TensorProto u;
  u.set_name("u");
  u.set_data_type(onnx::TensorProto::UINT64);
  u.add_dims(1);
  u.add_uint64_data(~uint64_t{0});
  auto big = TensorFromProto(u);
  REQUIRE(big.ok());
  CHECK(big->data<uint64_t>()[0] == ~uint64_t{0});

  onnx::TensorProto s;
  s.set_name("s");
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(2);
  s.add_string_data("a");
  auto short_strings = TensorFromProto(s);
  CHECK(!short_strings.ok());
  CHECK(short_strings.status().message().find("'s'") != std::string::npos);

  onnx::TensorProto c;
  c.set_name("c");
  c.set_data_type(onnx::TensorProto::COMPLEX64);
  CHECK(TensorFromProto(c).status().message().find("complex64") != std::string::npos);
}

TEST_CASE("tensor proto: 8-bit constants are held one byte each and read back exactly") {
  onnx::TensorProto w;  // int8 weights as raw data
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::INT8);
  w.add_dims(4);
  w.set_raw_data(std::string("\x80\xff\x00\x7f", 4));
  auto c = ConstFromProto(w);
  REQUIRE(c.ok());
  CHECK(c->type == ConstTensor::Type::kInt8);
  CHECK(c->bytes.size() == 4);
  CHECK(c->ints.empty());
  CHECK(c->IntAt(0) == -128);
  CHECK(c->At(1) == -1.0);
  CHECK(c->IntAt(3) == 127);
  const TypedTensor typed = c->AsTyped(DType::kInt8);
  CHECK(typed.data<int8_t>()[0] == -128);
  CHECK(typed.data<int8_t>()[3] == 127);
  CHECK(c->AsTyped(DType::kInt64).data<int64_t>()[1] == -1);
  CHECK(c->AsTensor().data[0] == -128.f);
  auto written = ProtoFromConst("w", *c, "int8");
  REQUIRE(written.ok());
  auto back = ConstFromProto(*written);
  REQUIRE(back.ok());
  CHECK(back->bytes == c->bytes);

  onnx::TensorProto z;  // uint8 zero points in int32_data, as some exporters write them
  z.set_name("z");
  z.set_data_type(onnx::TensorProto::UINT8);
  z.add_dims(2);
  z.add_int32_data(255);
  z.add_int32_data(3);
  auto u = ConstFromProto(z);
  REQUIRE(u.ok());
  CHECK(u->type == ConstTensor::Type::kUInt8);
  CHECK(u->IntAt(0) == 255);
  CHECK(u->AsTyped(DType::kUInt8).data<uint8_t>()[0] == 255);
  CHECK(u->AsTyped(DType::kFloat32).data<float>()[1] == 3.f);

  z.add_int32_data(4);  // three values for two elements
  CHECK(!ConstFromProto(z).ok());
  onnx::TensorProto b;
  b.set_name("b");
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(2);
  b.set_raw_data(std::string("\x02\x00", 2));  // any nonzero byte is true
  auto mask = ConstFromProto(b);
  REQUIRE(mask.ok());
  CHECK(mask->IntAt(0) == 1);
  CHECK(mask->AsTyped(DType::kBool).data<bool>()[0]);
  CHECK(!mask->AsTyped(DType::kBool).data<bool>()[1]);
}

}  // namespace
}  // namespace tilebank::engine::model
