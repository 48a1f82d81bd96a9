// Opening banks on this machine, as every front end does (the command line, Python, the reports,
// the benches): the host's fingerprint is recorded and checked when a bank is of the host's
// soc_version, and a model runs with the bank of the host's soc_version only.
#pragma once
#include <memory>
#include <string>

#include "repo/bank.h"

namespace tilebank {

// The bank at `dir` (a bank directory) in `mode`, as being of `soc_version` ("" : whatever it is).
Result<std::unique_ptr<Bank>> OpenBankOnHost(const std::string& dir, OpenMode mode, const std::string& soc_version);

// The bank a model runs with on this machine, read-only, under the root `bank_flag` names
// (ResolveBankRoot's chain); null when there is none yet (every node runs its built-in choice): a run
// never creates one. kRefused when `soc_version` is given and is not this machine's.
Result<std::unique_ptr<Bank>> OpenBankToRun(const std::string& bank_flag, const std::string& soc_version = "");

}  // namespace tilebank
