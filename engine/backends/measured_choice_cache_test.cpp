// Measured choices: recalled in the process once remembered, and kept on disk in the kernel cache's
// build folder as one file holding the whole key (so another process recalls it too); an unknown key
// recalls nothing.
#include "engine/backends/measured_choice_cache.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/backends/halide/kernel_disk_cache.h"
#include "tests/test_support.h"

namespace tilebank::engine {
namespace {

TEST_CASE("measured choices are remembered in the process and in the kernel cache's folder") {
  testing::TempDir dir;
  const char* saved = std::getenv("TILEBANK_KERNEL_CACHE");
  const std::string previous = saved ? saved : "";
  setenv("TILEBANK_KERNEL_CACHE", dir.path().c_str(), 1);
  const std::string key = "measured choice test|" + dir.path();
  CHECK(!RecallMeasuredChoice(key));
  RememberMeasuredChoice(key, "plain");
  CHECK(RecallMeasuredChoice(key) == std::optional<std::string>("plain"));
  CHECK(!RecallMeasuredChoice(key + " other"));
  // One file under <cache>/<build id>/choices, its first line the key with the host's facts.
  const std::filesystem::path folder = std::filesystem::path(KernelDiskCacheAt(dir.path()).dir()) / "choices";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    ++files;
    std::ifstream in(entry.path());
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    CHECK(first.rfind(key + "|", 0) == 0);
    CHECK(second == "plain");
  }
  CHECK(files == 1);
  RememberMeasuredChoice(key, "blocked");  // a new measurement replaces the old
  CHECK(RecallMeasuredChoice(key) == std::optional<std::string>("blocked"));
  if (saved) setenv("TILEBANK_KERNEL_CACHE", previous.c_str(), 1);
  else unsetenv("TILEBANK_KERNEL_CACHE");
}

}  // namespace
}  // namespace tilebank::engine
