// A dense row-major tensor of any DType: the executor's values, constants and test data. Numeric
// elements live in `bytes` (ElementBytes(dtype) each, as their C++ type), strings in `strings`.
// The tuned kernels compute on float32 `Tensor`s (engine/core/tensor.h); ToFloat and FromFloat
// bridge the two.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/tensor.h"

namespace tilebank::engine {

// What an ONNX value is: a tensor, a sequence of tensors, or an optional (empty, or holding a tensor
// or a sequence).
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };
const char* ValueKindName(ValueKind kind);  // "tensor", "sequence", "optional"

struct TypedTensor {
  DType dtype = DType::kFloat32;  // a sequence or optional: its elements' (kUndefined when not known)
  std::vector<int64_t> shape;     // a sequence or optional: {0}, so that size() is 0
  std::vector<std::byte> bytes;      // numeric types: size() x ElementBytes(dtype)
  std::vector<std::string> strings;  // kString: size() of them
  ValueKind kind = ValueKind::kTensor;
  std::vector<TypedTensor> elements;  // kSequence: its tensors; kOptional: none (empty) or the one it holds

  TypedTensor() = default;
  // Zeros (empty strings) of `dtype` and `shape`.
  TypedTensor(DType dtype, std::vector<int64_t> shape);
  static TypedTensor FromFloat(const Tensor& t);
  template <class T>
  static TypedTensor Of(std::vector<int64_t> shape, const std::vector<T>& values) {
    TypedTensor t(DTypeOf<T>(), std::move(shape));
    std::copy_n(values.begin(), std::min(values.size(), static_cast<size_t>(t.size())), t.data<T>());
    return t;
  }

  // A sequence of `elements` of dtype `element_type` (the elements' own when there are any).
  static TypedTensor Sequence(DType element_type, std::vector<TypedTensor> elements);
  // An optional holding `value` (a tensor or a sequence), or none (its element type `element_type`).
  static TypedTensor OptionalOf(TypedTensor value);
  static TypedTensor EmptyOptional(DType element_type);
  bool IsTensor() const { return kind == ValueKind::kTensor; }

  int64_t size() const { return Tensor::NumElements(shape); }
  int rank() const { return static_cast<int>(shape.size()); }

  // The elements as `T`, which must be the type `dtype` is stored as (DTypeOf<T>() == dtype).
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }

  // Element i of a numeric tensor as a double (bool: 0 or 1). Exact for every integer up to 2^53;
  // IntAt is exact for all of int64 (unsigned 64-bit values above INT64_MAX wrap).
  double At(int64_t i) const;
  int64_t IntAt(int64_t i) const;
  // Element i of a numeric tensor set from `v`, converted as static_cast to its type would (bool: v != 0).
  void SetAt(int64_t i, double v);
  void SetIntAt(int64_t i, int64_t v);

  // Every element as At and SetAt convert them, the dtype dispatched once per tensor (kString: zeros,
  // and nothing set).
  std::vector<double> ToDoubles() const;
  void SetFromDoubles(const std::vector<double>& values);

  // A float32 copy (numeric types converted); kString gives zeros.
  Tensor ToFloat() const;
  // The same elements converted to `to` (numeric types; strings stay strings only to kString).
  TypedTensor CastTo(DType to) const;

  // Same kind, dtype, shape and elements (NaNs compare by bits).
  bool operator==(const TypedTensor& other) const;
};

// Makes `t` a numeric tensor of `dtype` and `shape` whose elements the caller overwrites: memory it
// already holds is kept (and left as it was) as far as it goes, so a buffer passed back in each run
// is neither allocated nor cleared again.
void ReshapeForOverwrite(TypedTensor* t, DType dtype, std::vector<int64_t> shape);

// Copies `count` elements of `from` starting at element `from_at` into `to` at `to_at` (both of one
// dtype, numbers or strings; nothing when count <= 0).
void CopyElements(const TypedTensor& from, int64_t from_at, TypedTensor* to, int64_t to_at, int64_t count);
// `count` copies of the element of `bytes` bytes at `src`, one after the other from `dst`.
void RepeatElement(const std::byte* src, size_t bytes, int64_t count, std::byte* dst);

// While one lives on a thread, a TypedTensor made or reshaped there with more than `max_elements`
// elements (or dims whose product overflows) throws TensorTooLarge instead of allocating: constant
// folding runs the registry's kernels under one, so a malformed model cannot make the importer
// allocate without bound. Scopes nest; the innermost limit holds.
class TensorSizeLimit {
 public:
  explicit TensorSizeLimit(int64_t max_elements);
  ~TensorSizeLimit();
  TensorSizeLimit(const TensorSizeLimit&) = delete;
  TensorSizeLimit& operator=(const TensorSizeLimit&) = delete;

 private:
  int64_t previous_;
};
struct TensorTooLarge : std::length_error {
  using std::length_error::length_error;
};

// "2x3x4" ("scalar" for rank 0).
std::string ShapeText(const std::vector<int64_t>& shape);

// Each tensor's address, in order: a kernel's or a model run's inputs made from owned tensors.
std::vector<const TypedTensor*> PointersTo(const std::vector<TypedTensor>& tensors);

}  // namespace tilebank::engine
