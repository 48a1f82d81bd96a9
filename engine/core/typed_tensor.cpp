#include "engine/core/typed_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engine/core/cast_elements.h"

namespace tilebank::engine {
namespace {

template <class T>
double AsDouble(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<float>(v);
  else return static_cast<double>(v);
}

// `v` converted to T as static_cast would; for integer targets a value outside T's range (or NaN)
// gives 0 for NaN and the wrapped integer of its truncation otherwise, never undefined behaviour.
template <class T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else {
    if (std::isnan(v)) return T{0};
    const double t = std::trunc(v);
    if (t >= -9.2233720368547758e18 && t < 9.2233720368547758e18) return static_cast<T>(static_cast<int64_t>(t));
    if (t >= 0 && t < 1.8446744073709552e19) return static_cast<T>(static_cast<uint64_t>(t));
    return T{0};
  }
}

template <class T>
int64_t AsInt(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return FromDouble<int64_t>(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return FromDouble<int64_t>(v);
  else return static_cast<int64_t>(v);
}

template <class T>
T FromInt(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

}  // namespace

namespace {

thread_local int64_t size_limit = 0;  // 0: none (TensorSizeLimit)

// Throws TensorTooLarge when a limit is in force and `shape` holds more elements than it allows.
void CheckSizeLimit(const std::vector<int64_t>& shape) {
  if (size_limit <= 0) return;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > size_limit / d)) throw TensorTooLarge("a tensor of " + ShapeText(shape) + " is over the size limit");
    n *= d;
  }
  if (n > size_limit) throw TensorTooLarge("a tensor of " + ShapeText(shape) + " is over the size limit");
}

}  // namespace

TensorSizeLimit::TensorSizeLimit(int64_t max_elements) : previous_(size_limit) { size_limit = max_elements; }
TensorSizeLimit::~TensorSizeLimit() { size_limit = previous_; }

TypedTensor::TypedTensor(DType type, std::vector<int64_t> dims) : dtype(type), shape(std::move(dims)) {
  CheckSizeLimit(shape);
  if (dtype == DType::kString) strings.resize(static_cast<size_t>(size()));
  else bytes.resize(static_cast<size_t>(size()) * ElementBytes(dtype));
}

const char* ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kOptional: return "optional";
  }
  return "?";
}

TypedTensor TypedTensor::Sequence(DType element_type, std::vector<TypedTensor> elements) {
  TypedTensor t;
  t.kind = ValueKind::kSequence;
  t.dtype = elements.empty() ? element_type : elements[0].dtype;
  t.shape = {0};
  t.elements = std::move(elements);
  return t;
}

TypedTensor TypedTensor::OptionalOf(TypedTensor value) {
  TypedTensor t;
  t.kind = ValueKind::kOptional;
  t.dtype = value.dtype;
  t.shape = {0};
  t.elements.push_back(std::move(value));
  return t;
}

TypedTensor TypedTensor::EmptyOptional(DType element_type) {
  TypedTensor t;
  t.kind = ValueKind::kOptional;
  t.dtype = element_type;
  t.shape = {0};
  return t;
}

void ReshapeForOverwrite(TypedTensor* t, DType dtype, std::vector<int64_t> shape) {
  CheckSizeLimit(shape);
  t->kind = ValueKind::kTensor;
  t->elements.clear();
  t->dtype = dtype;
  t->shape = std::move(shape);
  t->strings.clear();
  t->bytes.resize(static_cast<size_t>(t->size()) * ElementBytes(dtype));
}

TypedTensor TypedTensor::FromFloat(const Tensor& t) { return Of<float>(t.shape, t.data); }

double TypedTensor::At(int64_t i) const {
  return VisitNumeric(dtype, [&](auto tag) { return AsDouble(data<decltype(tag)>()[i]); }, [] { return 0.0; });
}

int64_t TypedTensor::IntAt(int64_t i) const {
  return VisitNumeric(dtype, [&](auto tag) { return AsInt(data<decltype(tag)>()[i]); }, [] { return int64_t{0}; });
}

void TypedTensor::SetAt(int64_t i, double v) {
  VisitNumeric(dtype, [&](auto tag) { data<decltype(tag)>()[i] = FromDouble<decltype(tag)>(v); }, [] {});
}

void TypedTensor::SetIntAt(int64_t i, int64_t v) {
  VisitNumeric(dtype, [&](auto tag) { data<decltype(tag)>()[i] = FromInt<decltype(tag)>(v); }, [] {});
}

std::vector<double> TypedTensor::ToDoubles() const {
  std::vector<double> v(static_cast<size_t>(size()), 0.0);
  VisitNumeric(dtype, [&](auto tag) {
    const auto* d = data<decltype(tag)>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = AsDouble(d[i]);
  }, [] {});
  return v;
}

void TypedTensor::SetFromDoubles(const std::vector<double>& values) {
  VisitNumeric(dtype, [&](auto tag) {
    auto* d = data<decltype(tag)>();
    const size_t n = std::min(values.size(), static_cast<size_t>(size()));
    for (size_t i = 0; i < n; ++i) d[i] = FromDouble<decltype(tag)>(values[i]);
  }, [] {});
}

Tensor TypedTensor::ToFloat() const {
  Tensor t(shape);
  if (dtype == DType::kFloat32) {
    if (!bytes.empty()) std::memcpy(t.data.data(), bytes.data(), bytes.size());
    return t;
  }
  for (int64_t i = 0; i < t.size() && IsNumeric(dtype); ++i) t.data[i] = static_cast<float>(At(i));
  return t;
}

TypedTensor TypedTensor::CastTo(DType to) const {
  if (to == dtype) return *this;
  TypedTensor out(to, shape);
  if (!IsNumeric(dtype) || !IsNumeric(to)) return out;
  CastElements(*this, 0, size(), &out);
  return out;
}

void CastElements(const TypedTensor& from, int64_t first, int64_t count, TypedTensor* to) {
  // Integers go through int64 (exact), everything else through double; one loop per pair of types.
  const bool exact = (IsInteger(from.dtype) || from.dtype == DType::kBool) && (IsInteger(to->dtype) || to->dtype == DType::kBool);
  VisitNumeric(from.dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    const From* src = from.data<From>() + first;
    VisitNumeric(to->dtype, [&](auto to_tag) {
      using To = decltype(to_tag);
      To* dst = to->data<To>() + first;
      if (exact)
        for (int64_t i = 0; i < count; ++i) dst[i] = FromInt<To>(AsInt(src[i]));
      else
        for (int64_t i = 0; i < count; ++i) dst[i] = FromDouble<To>(AsDouble(src[i]));
    }, [] {});
  }, [] {});
}

bool TypedTensor::operator==(const TypedTensor& other) const {
  return kind == other.kind && dtype == other.dtype && shape == other.shape && bytes == other.bytes && strings == other.strings &&
         elements == other.elements;
}

void CopyElements(const TypedTensor& from, int64_t from_at, TypedTensor* to, int64_t to_at, int64_t count) {
  if (count <= 0) return;
  if (from.dtype == DType::kString) {
    std::copy_n(from.strings.begin() + from_at, count, to->strings.begin() + to_at);
    return;
  }
  const size_t bytes = ElementBytes(from.dtype);
  std::memcpy(to->bytes.data() + to_at * bytes, from.bytes.data() + from_at * bytes, count * bytes);
}

// `count` copies of the element of `bytes` bytes at `src`, one after the other from `dst`.
void RepeatElement(const std::byte* src, size_t bytes, int64_t count, std::byte* dst) {
  auto fill = [&](auto word) {
    std::memcpy(&word, src, sizeof word);
    std::fill_n(reinterpret_cast<decltype(word)*>(dst), count, word);
  };
  switch (bytes) {
    case 1: return void(std::memset(dst, static_cast<int>(*src), static_cast<size_t>(count)));
    case 2: return fill(uint16_t{});
    case 4: return fill(uint32_t{});
    case 8: return fill(uint64_t{});
    default:
      for (int64_t k = 0; k < count; ++k) std::memcpy(dst + k * bytes, src, bytes);
  }
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

std::vector<const TypedTensor*> PointersTo(const std::vector<TypedTensor>& tensors) {
  std::vector<const TypedTensor*> pointers;
  for (const auto& t : tensors) pointers.push_back(&t);
  return pointers;
}

}  // namespace tilebank::engine
