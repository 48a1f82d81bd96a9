// tilebank._native: the C++ engine for Python (python/tilebank/__init__.py re-exports it).
#include <pybind11/pybind11.h>

#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/core/soc_version.h"
#include "python/native/bank.h"
#include "python/native/errors.h"
#include "python/native/model_file.h"
#include "python/native/report.h"
#include "python/native/session.h"
#include "python/native/tune.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "tilebank's engine: InferenceSession, tuning jobs, the bank and reports";
  tilebank::python::RegisterErrors(m);
  tilebank::python::RegisterSession(m);
  tilebank::python::RegisterTune(m);
  tilebank::python::RegisterBank(m);
  tilebank::python::RegisterReport(m);
  tilebank::python::RegisterModelFile(m);
  m.def("soc_version", [] { return tilebank::HostSocVersion(); }, "this machine's soc_version");
  m.def("int8_weight_bits", [] { return tilebank::engine::kernels::Int8WeightBits(); },
        "8 where int8 products sum in int32 (VNNI); 7 elsewhere, where the int8 kernels halve the weights");
  m.attr("__version__") = TILEBANK_VERSION;
}
