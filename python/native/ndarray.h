// numpy arrays and the executor's TypedTensors. Inputs are copied once into the tensor the
// executor reads (it owns its inputs' bytes); outputs are handed to numpy without a copy: the
// array owns the tensor's buffer.
#pragma once
#include <pybind11/numpy.h>

#include <string>

#include "engine/core/typed_tensor.h"

namespace tilebank::python {

// kInvalidInput (raised) when the array's dtype is not `expected` ("float32", "int64", ...), naming `what`.
engine::TypedTensor TensorFromArray(const pybind11::array& array, engine::DType expected, const std::string& what);
pybind11::array ArrayFromTensor(engine::TypedTensor&& tensor);
// Any value as Python holds it: a tensor as an array, a sequence as a list of them, an optional as
// None (empty) or its value.
pybind11::object ObjectFromValue(engine::TypedTensor&& value);
// The value of a model input of `kind` from what Python gives: an array; a list or tuple of arrays
// (a sequence); None or a value (an optional). kInvalidInput (raised) naming `what` otherwise.
engine::TypedTensor ValueFromObject(const pybind11::handle& object, engine::ValueKind kind, engine::DType expected, const std::string& what);
// The numpy dtype of an executor dtype ("float32" -> numpy.float32; bfloat16 -> float32, converted).
pybind11::dtype NumpyDType(engine::DType dtype);

}  // namespace tilebank::python
