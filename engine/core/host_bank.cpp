#include "engine/core/host_bank.h"

#include "engine/core/soc_version.h"
#include "repo/bank_location.h"

namespace tilebank {

Result<std::unique_ptr<Bank>> OpenBankOnHost(const std::string& dir, OpenMode mode, const std::string& soc_version) {
  OpenOptions options;
  options.mode = mode;
  options.soc_version = soc_version;
  if (soc_version == HostSocVersion()) options.fingerprint = HostFingerprint();
  return Bank::Open(dir, options);
}

Result<std::unique_ptr<Bank>> OpenBankToRun(const std::string& bank_flag, const std::string& soc_version) {
  if (!soc_version.empty() && soc_version != HostSocVersion())
    return Status::Refused("soc " + soc_version + ": a model runs with the bank of this machine's soc_version, " + HostSocVersion());
  const std::string dir = BankDirUnder(ResolveBankRoot(bank_flag), HostSocVersion());
  if (!IsBankDir(dir)) return std::unique_ptr<Bank>();
  return OpenBankOnHost(dir, OpenMode::kReadOnly, HostSocVersion());
}

}  // namespace tilebank
