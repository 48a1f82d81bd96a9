// JSON between tilebank (nlohmann::json) and Python objects, through Python's json module.
#pragma once
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace tilebank::python {

pybind11::object ToPython(const nlohmann::json& value);
// kInvalidInput (raised) when `value` is not JSON-serializable.
nlohmann::json FromPython(pybind11::handle value, const std::string& what);

}  // namespace tilebank::python
