#include "engine/backends/measured_choice_cache.h"

#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "engine/backends/halide/kernel_disk_cache.h"
#include "engine/core/parallel_for.h"
#include "engine/core/run_queue_watch.h"
#include "engine/core/soc_version.h"

namespace tilebank::engine {
namespace {

std::mutex& Mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::string>& InProcess() {
  static std::map<std::string, std::string> choices;
  return choices;
}

std::string HostKey(const std::string& key) { return key + "|" + HostSocVersion() + "|threads=" + std::to_string(ParallelThreads()); }

// The file of `key` (which it holds whole: a hash collision reads as no choice).
std::string FileOf(const std::string& key) {
  const std::string root = DefaultKernelCacheDir();
  if (root.empty()) return "";
  char name[24];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return KernelDiskCacheAt(root).dir() + "/choices/" + name;
}

}  // namespace

std::optional<std::string> RecallMeasuredChoice(const std::string& key) {
  const std::string full = HostKey(key);
  std::lock_guard<std::mutex> lock(Mutex());
  if (auto it = InProcess().find(full); it != InProcess().end()) return it->second;
  const std::string file = FileOf(full);
  if (file.empty()) return std::nullopt;
  std::ifstream in(file);
  std::string stored_key, choice;
  if (!std::getline(in, stored_key) || stored_key != full || !std::getline(in, choice) || choice.empty()) return std::nullopt;
  InProcess()[full] = choice;
  return choice;
}

void RememberMeasuredChoice(const std::string& key, const std::string& choice, const RunQueueWatch* timed_under) {
  const std::string full = HostKey(key);
  const bool busy = timed_under && !timed_under->Quiet();
  std::lock_guard<std::mutex> lock(Mutex());
  InProcess()[full] = choice;
  if (busy) return;
  const std::string file = FileOf(full);
  if (file.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  if (ec) return;
  const std::string temporary = file + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << full << "\n" << choice << "\n";
    if (!out) return;
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) std::filesystem::remove(temporary, ec);
}

}  // namespace tilebank::engine
