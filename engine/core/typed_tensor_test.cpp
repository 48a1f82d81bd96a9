// DTypes (names, sizes, classes), float16/bfloat16 conversion, and TypedTensor's element access
// and casts.
#include "engine/core/typed_tensor.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace tilebank::engine {
namespace {

TEST_CASE("dtype: names round-trip, sizes and classes follow ONNX") {
  for (int code = 1; code <= 16; ++code) {
    const DType d = DTypeOfOnnx(code);
    REQUIRE(d != DType::kUndefined);
    CHECK(ParseDType(DTypeName(d)) == d);
  }
  CHECK(DTypeOfOnnx(17) == DType::kUndefined);
  CHECK(DTypeName(static_cast<DType>(42)) == "type 42");
  CHECK(ParseDType("float") == DType::kFloat32);
  CHECK(!ParseDType("float128"));
  CHECK(ElementBytes(DType::kBFloat16) == 2);
  CHECK(ElementBytes(DType::kUInt64) == 8);
  CHECK(ElementBytes(DType::kString) == 0);
  CHECK(IsFloating(DType::kFloat16));
  CHECK(IsInteger(DType::kUInt32));
  CHECK(!IsInteger(DType::kBool));
  CHECK(IsNumeric(DType::kBool));
  CHECK(!IsSigned(DType::kUInt8));
  CHECK(IsSigned(DType::kInt8));
}

TEST_CASE("dtype: float16 and bfloat16 round to nearest even, keep infinities and NaN") {
  CHECK(Float16(1.0f).bits == 0x3c00);
  CHECK(Float16(-2.0f).bits == 0xc000);
  CHECK(Float16(65504.f).bits == 0x7bff);                    // the largest half
  CHECK(Float16(65520.f).bits == 0x7c00);                    // rounds to infinity
  CHECK(Float16(std::ldexp(1.f, -24)).bits == 0x0001);       // the smallest subnormal
  CHECK(Float16(std::ldexp(1.f, -25)).bits == 0x0000);       // halfway: to even (zero)
  CHECK(Float16(1.f + std::ldexp(1.f, -11)).bits == 0x3c00);  // halfway between 1 and the next: to even
  CHECK(Float16(1.f + 3 * std::ldexp(1.f, -11)).bits == 0x3c02);
  CHECK(std::isinf(static_cast<float>(Float16(std::numeric_limits<float>::infinity()))));
  CHECK(std::isnan(static_cast<float>(Float16(std::nanf("")))));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {  // every finite half survives float and back
    Float16 h;
    h.bits = static_cast<uint16_t>(bits);
    const float f = h;
    if (std::isnan(f)) continue;
    CHECK(Float16(f).bits == h.bits);
  }
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  CHECK(static_cast<float>(BFloat16(3.140625f)) == 3.140625f);
  CHECK(BFloat16(1.f + std::ldexp(1.f, -8)).bits == 0x3f80);  // halfway: to even
  CHECK(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
}

TEST_CASE("typed tensor: element access, float bridge and casts per dtype") {
  TypedTensor i64 = TypedTensor::Of<int64_t>({3}, {int64_t{1} << 60, -7, 0});
  CHECK(i64.IntAt(0) == int64_t{1} << 60);  // exact past 2^53
  CHECK(i64.At(1) == -7);
  const TypedTensor as_bool = i64.CastTo(DType::kBool);
  CHECK(as_bool.data<bool>()[0]);
  CHECK(!as_bool.data<bool>()[2]);
  const TypedTensor as_i8 = TypedTensor::Of<float>({4}, {2.9f, -2.9f, 300.f, std::nanf("")}).CastTo(DType::kInt8);
  CHECK(as_i8.IntAt(0) == 2);   // truncation toward zero
  CHECK(as_i8.IntAt(1) == -2);
  CHECK(as_i8.IntAt(2) == 44);  // 300 wraps in 8 bits
  CHECK(as_i8.IntAt(3) == 0);   // NaN
  const TypedTensor half = TypedTensor::Of<float>({2}, {0.5f, -1.25f}).CastTo(DType::kFloat16);
  CHECK(half.bytes.size() == 4);
  CHECK(half.At(1) == -1.25);
  const Tensor f = half.ToFloat();
  CHECK(f.shape == std::vector<int64_t>{2});
  CHECK(f.data[0] == 0.5f);
  CHECK(TypedTensor::FromFloat(f) == TypedTensor::Of<float>({2}, {0.5f, -1.25f}));
  TypedTensor u64(DType::kUInt64, {1});
  u64.SetAt(0, 1.8e19);
  CHECK(u64.data<uint64_t>()[0] == uint64_t{18000000000000000000u});
  TypedTensor strings(DType::kString, {2});
  CHECK(strings.strings.size() == 2);
  CHECK(strings.bytes.empty());
}

}  // namespace
}  // namespace tilebank::engine
