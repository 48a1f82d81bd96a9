#include "engine/core/startup_environment.h"

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

void PrepareStartupEnvironment(int argc, char** argv) {
  bool changed = false;
  if (!std::getenv("GOMP_SPINCOUNT") && !std::getenv("OMP_WAIT_POLICY"))
    changed |= setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) == 0;
  const char* set = std::getenv("TILEBANK_HUGE_PAGES");
  const std::string huge = set ? set : "";
  const bool wanted = huge == "on" || (huge != "off" && ModelFileBytes(argc, argv) >= kHugePagesModelBytes);
  if (wanted && TransparentHugePagesOffered())
    if (const std::string tunables = TunablesWith(std::getenv("GLIBC_TUNABLES"), kMallocHugePagesTunable); !tunables.empty())
      changed |= setenv("GLIBC_TUNABLES", tunables.c_str(), 1) == 0;
  if (changed) execv("/proc/self/exe", argv);  // returns only on failure: go on with the defaults
}

}  // namespace tilebank::engine
