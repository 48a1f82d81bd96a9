// What Python reads of a model file beside running it (engine/ir/model_metadata.h): its metadata and
// value types, for tilebank.onnxruntime's get_modelmeta and NodeArg; and a copy of it with some
// initializers replaced, for SessionOptions.add_initializer.
#pragma once
#include <pybind11/pybind11.h>

namespace tilebank::python {

void RegisterModelFile(pybind11::module_& m);

}  // namespace tilebank::python
