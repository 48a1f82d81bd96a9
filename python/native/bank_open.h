// Where the Python API finds a bank, by the command line's rules: the root from `bank` (else
// TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank), the soc_version from `soc`
// (else this machine's), the fingerprint checked when the bank is this machine's.
#pragma once
#include <memory>
#include <string>

#include "repo/bank.h"

namespace tilebank::python {

// root/soc for `bank` and `soc` ("" for the defaults).
std::string BankDirFor(const std::string& bank, const std::string& soc);
std::string SocFor(const std::string& soc);

// The bank a model runs with on this machine, read-only; null when there is none yet (every node
// runs its built-in choice). kRefused for another soc_version than this machine's.
Result<std::unique_ptr<Bank>> OpenBankToRun(const std::string& bank, const std::string& soc);

// A bank directory opened as the CLI's bank commands open it.
Result<std::unique_ptr<Bank>> OpenBankAt(const std::string& dir, OpenMode mode, const std::string& soc);

}  // namespace tilebank::python
