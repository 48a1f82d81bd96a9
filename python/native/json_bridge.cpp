#include "python/native/json_bridge.h"

#include "python/native/errors.h"

namespace tilebank::python {

namespace py = pybind11;

py::object ToPython(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

nlohmann::json FromPython(py::handle value, const std::string& what) {
  std::string text;
  try {
    text = py::str(py::module_::import("json").attr("dumps")(value));
  } catch (py::error_already_set&) {
    PyErr_Clear();
    Raise(Status::InvalidInput(what + " is not JSON (a dict of lists, strings and numbers)"));
  }
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) Raise(Status::InvalidInput(what + " is not JSON"));
  return j;
}

}  // namespace tilebank::python
