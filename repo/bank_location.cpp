#include "repo/bank_location.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>

namespace tilebank {

namespace fs = std::filesystem;

std::string ResolveBankRoot(const std::string& bank_flag) {
  if (!bank_flag.empty()) return bank_flag;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (!env("TUNE_BANK_PATH").empty()) return env("TUNE_BANK_PATH");
  if (!env("ASCEND_CACHE_PATH").empty()) return env("ASCEND_CACHE_PATH") + "/aoe_data";
  if (!env("XDG_DATA_HOME").empty()) return env("XDG_DATA_HOME") + "/tilebank";
  return env("HOME") + "/.local/share/tilebank";
}

std::string BankDirUnder(const std::string& root, const std::string& soc_version) { return root + "/" + soc_version; }

bool IsBankDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "data.mdb", ec);
}

std::vector<std::string> SocVersionsUnder(const std::string& root) {
  std::vector<std::string> socs;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(root, ec))
    if (item.is_directory(ec) && IsBankDir(item.path().string())) socs.push_back(item.path().filename().string());
  std::sort(socs.begin(), socs.end());
  return socs;
}

Result<BankRef> ParseBankRef(const std::string& argument, const std::string& soc_version) {
  BankRef ref;
  ref.spelled = argument;
  std::string path = argument;
  if (auto at = argument.rfind('@'); at != std::string::npos && at + 1 < argument.size()) {
    uint64_t generation = 0;
    const char* begin = argument.data() + at + 1;
    const char* end = argument.data() + argument.size();
    auto [stop, ec] = std::from_chars(begin, end, generation);
    if (ec == std::errc() && stop == end) {
      ref.generation = generation;
      path = argument.substr(0, at);
    }
  }
  if (IsBankDir(path)) {
    ref.dir = path;
  } else {
    ref.dir = (fs::path(path) / soc_version).string();
    if (!IsBankDir(ref.dir)) {
      std::string available;
      for (const std::string& soc : SocVersionsUnder(path)) available += (available.empty() ? "" : ", ") + soc;
      return Status::NotFound("no bank at '" + path + "' for soc_version " + soc_version +
                              (available.empty() ? std::string(" (no banks there)")
                                                 : " (banks there: " + available + "; pick one with --soc)"));
    }
  }
  return ref;
}

}  // namespace tilebank
