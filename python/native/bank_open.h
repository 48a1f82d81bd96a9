// Where the Python API finds a bank, by the command line's rules: the root from `bank` (else
// TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank), the soc_version from `soc`
// (else this machine's). Banks are opened through engine/core/host_bank.h, as everywhere.
#pragma once
#include <memory>
#include <string>

#include "repo/bank.h"

namespace tilebank::python {

// root/soc for `bank` and `soc` ("" for the defaults).
std::string BankDirFor(const std::string& bank, const std::string& soc);
std::string SocFor(const std::string& soc);

}  // namespace tilebank::python
