#include "python/native/ndarray.h"

#include <cstring>
#include <memory>

#include "python/native/errors.h"

namespace tilebank::python {

namespace py = pybind11;
using engine::DType;
using engine::TypedTensor;

py::dtype NumpyDType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kBFloat16: return py::dtype("float32");
    case DType::kInt8: return py::dtype("int8");
    case DType::kInt16: return py::dtype("int16");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kUInt16: return py::dtype("uint16");
    case DType::kUInt32: return py::dtype("uint32");
    case DType::kUInt64: return py::dtype("uint64");
    case DType::kBool: return py::dtype("bool");
    case DType::kComplex64: return py::dtype("complex64");
    case DType::kComplex128: return py::dtype("complex128");
    case DType::kString: return py::dtype("O");
    default: return py::dtype("float32");
  }
}

namespace {
std::vector<int64_t> ShapeOf(const py::array& a) {
  std::vector<int64_t> shape;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) shape.push_back(a.shape(i));
  return shape;
}
}  // namespace

TypedTensor TensorFromArray(const py::array& array, DType expected, const std::string& what) {
  if (expected == DType::kString) {
    TypedTensor t(DType::kString, ShapeOf(array));
    auto flat = array.attr("ravel")();
    size_t i = 0;
    for (auto item : flat) t.strings[i++] = py::str(item);
    return t;
  }
  const py::dtype want = NumpyDType(expected);
  if (!array.dtype().is(want) && !array.dtype().equal(want))
    Raise(Status::InvalidInput(what + " expects " + engine::DTypeName(expected) + ", got numpy " + std::string(py::str(array.dtype()))));
  // bfloat16, which numpy has no type for, is given as float32 and rounded.
  TypedTensor t(expected == DType::kBFloat16 ? DType::kFloat32 : expected, ShapeOf(array));
  // A C-contiguous copy when the array is strided (a view, a transpose).
  py::array contiguous = py::array::ensure(array, py::array::c_style);
  if (!contiguous) Raise(Status::InvalidInput(what + " cannot be read as a C-contiguous array"));
  std::memcpy(t.bytes.data(), contiguous.data(), t.bytes.size());
  return expected == DType::kBFloat16 ? t.CastTo(DType::kBFloat16) : t;
}

py::array ArrayFromTensor(TypedTensor&& tensor) {
  std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
  if (tensor.dtype == DType::kString) {
    py::array out(py::dtype("O"), shape);
    auto flat = out.attr("reshape")(-1);
    for (size_t i = 0; i < tensor.strings.size(); ++i) flat.attr("__setitem__")(i, py::str(tensor.strings[i]));
    return out;
  }
  if (tensor.dtype == DType::kBFloat16) {
    py::array_t<float> out(shape);
    const auto* in = reinterpret_cast<const engine::BFloat16*>(tensor.bytes.data());
    float* dst = out.mutable_data();
    for (int64_t i = 0; i < tensor.size(); ++i) dst[i] = static_cast<float>(in[i]);
    return std::move(out);
  }
  // The array owns the tensor's bytes: no copy.
  auto* owned = new std::vector<std::byte>(std::move(tensor.bytes));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<std::byte>*>(p); });
  return py::array(NumpyDType(tensor.dtype), shape, owned->data(), free_when_done);
}

py::object ObjectFromValue(TypedTensor&& value) {
  if (value.kind == engine::ValueKind::kOptional) return value.elements.empty() ? py::object(py::none()) : ObjectFromValue(std::move(value.elements[0]));
  if (value.kind == engine::ValueKind::kSequence) {
    py::list items;
    for (TypedTensor& e : value.elements) items.append(ObjectFromValue(std::move(e)));
    return std::move(items);
  }
  return ArrayFromTensor(std::move(value));
}

TypedTensor ValueFromObject(const py::handle& object, engine::ValueKind kind, DType expected, const std::string& what) {
  if (kind == engine::ValueKind::kOptional) {
    if (object.is_none()) return TypedTensor::EmptyOptional(expected);
    const bool sequence = py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object);
    return TypedTensor::OptionalOf(ValueFromObject(object, sequence ? engine::ValueKind::kSequence : engine::ValueKind::kTensor, expected, what));
  }
  if (kind == engine::ValueKind::kSequence) {
    if (!py::isinstance<py::list>(object) && !py::isinstance<py::tuple>(object))
      Raise(Status::InvalidInput(what + " is a sequence: give a list of arrays"));
    std::vector<TypedTensor> elements;
    size_t i = 0;
    for (const py::handle item : object) {
      py::array array = py::array::ensure(item);
      if (!array) Raise(Status::InvalidInput(what + " element " + std::to_string(i) + " is not an array"));
      elements.push_back(TensorFromArray(array, expected, what + " element " + std::to_string(i)));
      ++i;
    }
    return TypedTensor::Sequence(expected, std::move(elements));
  }
  py::array array = py::array::ensure(object);
  if (!array) Raise(Status::InvalidInput(what + " is not an array"));
  return TensorFromArray(array, expected, what);
}

}  // namespace tilebank::python
