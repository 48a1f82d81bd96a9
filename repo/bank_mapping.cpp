// Bank::ReleaseMappedPages: handing a scan's mapped pages back to the page cache.
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "repo/bank.h"

namespace tilebank {

void Bank::ReleaseMappedPages() const {
  // LMDB does not tell where it mapped the data file (mdb_env_info's address is set only with
  // MDB_FIXEDMAP), so the mapping is found by the file's path in /proc/self/maps.
  std::error_code ec;
  const std::string data_file = std::filesystem::canonical(std::filesystem::path(dir_) / "data.mdb", ec).string();
  if (ec) return;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t path_at = line.find('/');
    if (path_at == std::string::npos || line.compare(path_at, std::string::npos, data_file) != 0) continue;
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2 || end <= start) continue;
    // A shared file mapping: the pages leave this process's resident set, stay in the page
    // cache, and map back in, unchanged, on the next read.
    madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
  }
}

}  // namespace tilebank
