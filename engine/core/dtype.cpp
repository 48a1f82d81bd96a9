#include "engine/core/dtype.h"

#include <cmath>

namespace tilebank::engine {
namespace {

struct DTypeRow {
  DType dtype;
  const char* name;
  size_t bytes;
};

constexpr DTypeRow kRows[] = {
    {DType::kFloat32, "float32", 4},   {DType::kUInt8, "uint8", 1},     {DType::kInt8, "int8", 1},          {DType::kUInt16, "uint16", 2},
    {DType::kInt16, "int16", 2},       {DType::kInt32, "int32", 4},     {DType::kInt64, "int64", 8},        {DType::kString, "string", 0},
    {DType::kBool, "bool", 1},         {DType::kFloat16, "float16", 2}, {DType::kFloat64, "float64", 8},    {DType::kUInt32, "uint32", 4},
    {DType::kUInt64, "uint64", 8},     {DType::kComplex64, "complex64", 8}, {DType::kComplex128, "complex128", 16},
    {DType::kBFloat16, "bfloat16", 2},
};

const DTypeRow* RowOf(DType dtype) {
  for (const DTypeRow& row : kRows)
    if (row.dtype == dtype) return &row;
  return nullptr;
}

uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float FloatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

std::string DTypeName(DType dtype) {
  const DTypeRow* row = RowOf(dtype);
  return row ? row->name : "type " + std::to_string(static_cast<int>(dtype));
}

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeRow& row : kRows)
    if (name == row.name) return row.dtype;
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  return std::nullopt;
}

DType DTypeOfOnnx(int onnx_elem_type) { return RowOf(static_cast<DType>(onnx_elem_type)) ? static_cast<DType>(onnx_elem_type) : DType::kUndefined; }

size_t ElementBytes(DType dtype) {
  const DTypeRow* row = RowOf(dtype);
  return row ? row->bytes : 0;
}

bool IsFloating(DType d) { return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16; }

bool IsInteger(DType d) {
  switch (d) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: return true;
    default: return false;
  }
}

bool IsSigned(DType d) {
  return IsFloating(d) || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}

bool IsNumeric(DType d) { return IsFloating(d) || IsInteger(d) || d == DType::kBool; }

Float16::Float16(float f) {
  const uint32_t u = BitsOf(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (kept quiet)
    bits = static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds past the largest half: inf
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // a half subnormal (or zero): scale so the rounding is the FPU's
    const float magnitude = FloatOf(abs) * 16777216.f;  // x 2^24: half subnormals become integers
    bits = static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(magnitude)));
    return;
  }
  // Normal: rebias the exponent, round the mantissa to nearest even.
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  bits = static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

Float16::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24
    const float magnitude = static_cast<float>(mantissa) / 16777216.f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return FloatOf(sign | 0x7f800000u | (mantissa << 13));
  return FloatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

BFloat16::BFloat16(float f) {
  const uint32_t u = BitsOf(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays NaN
    bits = static_cast<uint16_t>((u >> 16) | 0x40u);
    return;
  }
  bits = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

BFloat16::operator float() const { return FloatOf(static_cast<uint32_t>(bits) << 16); }

}  // namespace tilebank::engine
