#include "engine/core/startup_environment.h"

#include "engine/core/heap_blocks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tilebank::engine {

std::string TunablesWith(const char* current, const std::string& tunable) {
  const std::string name = tunable.substr(0, tunable.find('='));
  const std::string list = current ? current : "";
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ':');)
    if (item.substr(0, item.find('=')) == name) return "";
  return list.empty() ? tunable : list + ":" + tunable;
}

long long ModelFileBytes(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string path;
    if ((arg == "-m" || arg == "--model") && i + 1 < argc) path = argv[i + 1];
    else if (arg.rfind("--model=", 0) == 0) path = arg.substr(8);
    else if (arg.size() > 2 && arg.rfind("-m", 0) == 0) path = arg.substr(2);  // -mPATH
    struct stat st {};
    if (!path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_size;
  }
  return 0;
}

bool TransparentHugePagesOffered() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
}

namespace {

// GLIBC_TUNABLES as it was before this program added the huge-page tunable (set only between the
// two starts): the second start puts it back, so that the processes it starts decide for their own
// models.
constexpr const char* kTunablesBefore = "TILEBANK_GLIBC_TUNABLES_BEFORE";

void RestoreTunables(const char* before) {
  if (before && *before) setenv("GLIBC_TUNABLES", before, 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kTunablesBefore);
}

}  // namespace

bool TunablesUseHugePages(const char* tunables) {
  const std::string list = tunables ? tunables : "", name = "glibc.malloc.hugetlb=";
  for (size_t at = list.find(name); at != std::string::npos; at = list.find(name, at + 1))
    if ((at == 0 || list[at - 1] == ':') && at + name.size() < list.size() && (list[at + name.size()] == '1' || list[at + name.size()] == '2'))
      return true;
  return false;
}

void PrepareStartupEnvironment(int argc, char** argv) {
  SetMallocUsesHugePages(TunablesUseHugePages(std::getenv("GLIBC_TUNABLES")));  // what glibc read as this start began
  if (const char* before = std::getenv(kTunablesBefore)) {  // the second start: glibc has read them
    RestoreTunables(std::string(before).c_str());
    return;
  }
  bool changed = false;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string before = tunables ? tunables : "";  // unset and empty are the same to glibc
  bool tunables_changed = false;
  if (!std::getenv("GOMP_SPINCOUNT") && !std::getenv("OMP_WAIT_POLICY"))
    changed |= setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) == 0;
  const char* set = std::getenv("TILEBANK_HUGE_PAGES");
  const std::string huge = set ? set : "";
  const bool wanted = huge == "on" || (huge != "off" && ModelFileBytes(argc, argv) > 0);
  if (wanted && TransparentHugePagesOffered())
    if (const std::string added = TunablesWith(before.c_str(), kMallocHugePagesTunable); !added.empty())
      tunables_changed = setenv("GLIBC_TUNABLES", added.c_str(), 1) == 0 && setenv(kTunablesBefore, before.c_str(), 1) == 0;
  if (changed || tunables_changed) execv("/proc/self/exe", argv);  // returns only on failure: go on with the defaults
  if (tunables_changed) RestoreTunables(before.c_str());
}

}  // namespace tilebank::engine
