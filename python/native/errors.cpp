#include "python/native/errors.h"

namespace tilebank::python {

namespace py = pybind11;

namespace {
PyObject* g_error = nullptr;
PyObject* g_invalid = nullptr;
PyObject* g_not_found = nullptr;
PyObject* g_refused = nullptr;

PyObject* NewError(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = "tilebank." + std::string(name);
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}
}  // namespace

void RegisterErrors(py::module_& m) {
  g_error = NewError(m, "Error", PyExc_RuntimeError, "A tilebank failure; the message is the command line's.");
  const py::tuple invalid_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError));
  g_invalid = NewError(m, "InvalidInputError", invalid_bases.ptr(), "A malformed file, argument or input.");
  const py::tuple not_found_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_FileNotFoundError));
  g_not_found = NewError(m, "NotFoundError", not_found_bases.ptr(), "A bank, file, job or key that is absent.");
  g_refused = NewError(m, "RefusedError", g_error, "A valid request refused: another soc_version, a newer bank format, a read-only bank.");
}

void Raise(const Status& status) {
  PyObject* type = g_error;
  switch (status.code()) {
    case StatusCode::kInvalidInput: type = g_invalid; break;
    case StatusCode::kNotFound: type = g_not_found; break;
    case StatusCode::kRefused: type = g_refused; break;
    default: break;
  }
  PyErr_SetString(type, status.message().c_str());
  throw py::error_already_set();
}

}  // namespace tilebank::python
