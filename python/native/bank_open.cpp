#include "python/native/bank_open.h"

#include "engine/core/soc_version.h"
#include "repo/bank_location.h"

namespace tilebank::python {

std::string SocFor(const std::string& soc) { return soc.empty() ? HostSocVersion() : soc; }

std::string BankDirFor(const std::string& bank, const std::string& soc) { return BankDirUnder(ResolveBankRoot(bank), SocFor(soc)); }

}  // namespace tilebank::python
