// Where banks live. A bank root holds one LMDB environment per soc_version: <root>/<soc_version>/.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tilebank {

// --bank flag > TUNE_BANK_PATH > ASCEND_CACHE_PATH/aoe_data > ${XDG_DATA_HOME:-$HOME/.local/share}/tilebank
std::string ResolveBankRoot(const std::string& bank_flag);

// The bank directory of `soc_version` under `root`: <root>/<soc_version>. Every place that names a
// bank's directory from its root goes through this.
std::string BankDirUnder(const std::string& root, const std::string& soc_version);

// True when `dir` holds an LMDB environment (data.mdb).
bool IsBankDir(const std::string& dir);

// The soc_version directories under a root that hold banks, sorted.
std::vector<std::string> SocVersionsUnder(const std::string& root);

// A bank named on the command line: "PATH[@GENERATION]". PATH is a bank directory itself or a
// root, in which case the bank is PATH/<soc_version>.
struct BankRef {
  std::string dir;
  std::optional<uint64_t> generation;
  std::string spelled;  // as the user wrote it, for messages
};
Result<BankRef> ParseBankRef(const std::string& argument, const std::string& soc_version);

}  // namespace tilebank
