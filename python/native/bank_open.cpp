#include "python/native/bank_open.h"

#include "engine/target/soc_version.h"
#include "repo/bank_location.h"

namespace tilebank::python {

std::string SocFor(const std::string& soc) { return soc.empty() ? HostSocVersion() : soc; }

std::string BankDirFor(const std::string& bank, const std::string& soc) { return ResolveBankRoot(bank) + "/" + SocFor(soc); }

Result<std::unique_ptr<Bank>> OpenBankAt(const std::string& dir, OpenMode mode, const std::string& soc) {
  OpenOptions options;
  options.mode = mode;
  options.soc_version = soc;
  if (soc == HostSocVersion()) options.fingerprint = HostFingerprint();
  return Bank::Open(dir, options);
}

Result<std::unique_ptr<Bank>> OpenBankToRun(const std::string& bank, const std::string& soc) {
  if (!soc.empty() && soc != HostSocVersion())
    return Status::Refused("soc " + soc + ": a model runs with the bank of this machine's soc_version, " + HostSocVersion());
  const std::string dir = BankDirFor(bank, soc);
  if (!IsBankDir(dir)) return std::unique_ptr<Bank>();
  return OpenBankAt(dir, OpenMode::kReadOnly, HostSocVersion());
}

}  // namespace tilebank::python
