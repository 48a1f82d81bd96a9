// The HTML report of a bank (`tilebank report --bank ROOT`): entries per op type and template,
// where they came from (provenance), the coverage of a model's operators and subgraphs (--model),
// and a diff against another bank (--diff), in one self-contained page.
#pragma once
#include <string>

#include "base/status.h"

namespace tilebank::report {

struct BankReportOptions {
  std::string bank;   // a bank root or a bank directory
  std::string soc;    // "" : this machine's
  std::string model;  // "" : no coverage section
  std::string other;  // "" : no diff section; a bank root or directory
};

Status WriteBankReport(const BankReportOptions& options, const std::string& output);

}  // namespace tilebank::report
