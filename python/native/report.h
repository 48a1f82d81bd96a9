// tilebank._report_jobs and tilebank._report_bank: the HTML reports (report/) from Python.
#pragma once
#include <pybind11/pybind11.h>

namespace tilebank::python {

void RegisterReport(pybind11::module_& m);

}  // namespace tilebank::python
