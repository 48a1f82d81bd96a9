// tilebank.InferenceSession: an ONNX model bound to a bank's policies, run on numpy arrays, as ONNX
// Runtime's InferenceSession is. One executor per set of input shapes, bound on first use and kept.
#pragma once
#include <pybind11/pybind11.h>

namespace tilebank::python {

void RegisterSession(pybind11::module_& m);

}  // namespace tilebank::python
