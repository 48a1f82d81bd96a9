// Element types of tensors: ONNX's (the codes are TensorProto::DataType's), named as the executor
// prints them ("float32", "int64", "bool", ...), with the C++ type each is stored as.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace tilebank::engine {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// "float32", "uint8", ..., "bfloat16"; "type N" for a code ONNX does not define.
std::string DTypeName(DType dtype);
// A DTypeName, or ATC's spellings ("float", "double", "half"); nullopt otherwise.
std::optional<DType> ParseDType(std::string_view name);
// kUndefined for a code that is no DType.
DType DTypeOfOnnx(int onnx_elem_type);
// Bytes of one element; 0 for strings (held as std::string) and kUndefined.
size_t ElementBytes(DType dtype);
bool IsFloating(DType dtype);  // float16, bfloat16, float32, float64
bool IsInteger(DType dtype);   // int8..int64, uint8..uint64 (not bool)
bool IsSigned(DType dtype);    // the floating types and int8..int64
bool IsNumeric(DType dtype);   // IsFloating or IsInteger or bool (0 and 1)

// IEEE half and bfloat16 as stored: 16 bits, converted to and from float (round to nearest even).
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f);
  operator float() const;
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  operator float() const;
};

// Calls `f(T{})` with the C++ type elements of `dtype` are stored as (bool as bool, float16 as
// Float16, ...) and returns what it returns. Strings, complex types and kUndefined are not numeric:
// `f` is not called and `otherwise()` is returned.
template <class F, class G>
decltype(auto) VisitNumeric(DType dtype, F&& f, G&& otherwise) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kFloat16: return f(Float16{});
    case DType::kBFloat16: return f(BFloat16{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kBool: return f(bool{});
    default: return otherwise();
  }
}

// The DType a C++ element type is stored as.
template <class T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kFloat32; }
template <> constexpr DType DTypeOf<double>() { return DType::kFloat64; }
template <> constexpr DType DTypeOf<Float16>() { return DType::kFloat16; }
template <> constexpr DType DTypeOf<BFloat16>() { return DType::kBFloat16; }
template <> constexpr DType DTypeOf<int8_t>() { return DType::kInt8; }
template <> constexpr DType DTypeOf<int16_t>() { return DType::kInt16; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kInt32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kInt64; }
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType DTypeOf<uint16_t>() { return DType::kUInt16; }
template <> constexpr DType DTypeOf<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType DTypeOf<uint64_t>() { return DType::kUInt64; }
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }
template <> constexpr DType DTypeOf<std::string>() { return DType::kString; }

}  // namespace tilebank::engine
