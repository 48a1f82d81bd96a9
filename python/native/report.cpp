#include "python/native/report.h"

#include <pybind11/stl.h>

#include "python/native/errors.h"
#include "report/bank_report.h"
#include "report/job_report.h"

namespace tilebank::python {

namespace py = pybind11;

void RegisterReport(py::module_& m) {
  m.def(
      "_report_jobs",
      [](const std::vector<std::string>& result_paths, const std::string& output) {
        Status s;
        {
          py::gil_scoped_release release;
          s = report::WriteJobReport(result_paths, output);
        }
        ThrowIfError(s);
      },
      py::arg("result_paths"), py::arg("output"), "the HTML report of one or more tuning jobs' result files");
  m.def(
      "_report_bank",
      [](const std::string& bank, const std::string& soc, const std::string& model, const std::string& other, const std::string& output) {
        Status s;
        {
          py::gil_scoped_release release;
          report::BankReportOptions o{bank, soc, model, other};
          s = report::WriteBankReport(o, output);
        }
        ThrowIfError(s);
      },
      py::arg("bank"), py::arg("soc"), py::arg("model"), py::arg("other"), py::arg("output"), "the HTML report of a bank");
}

}  // namespace tilebank::python
