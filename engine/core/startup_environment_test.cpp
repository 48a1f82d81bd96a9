#include "engine/core/startup_environment.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tilebank::engine {

TEST_CASE("TunablesWith adds the huge-page tunable unless GLIBC_TUNABLES names it") {
  CHECK(TunablesWith(nullptr, kMallocHugePagesTunable) == "glibc.malloc.hugetlb=1");
  CHECK(TunablesWith("", kMallocHugePagesTunable) == "glibc.malloc.hugetlb=1");
  CHECK(TunablesWith("glibc.malloc.arena_max=2", kMallocHugePagesTunable) == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // The user's own choice stands, whatever its value.
  CHECK(TunablesWith("glibc.malloc.hugetlb=0", kMallocHugePagesTunable).empty());
  CHECK(TunablesWith("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2", kMallocHugePagesTunable).empty());
  // A longer name that starts the same is another tunable.
  CHECK(TunablesWith("glibc.malloc.hugetlbx=1", kMallocHugePagesTunable) == "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1");
}

TEST_CASE("TunablesUseHugePages reads glibc.malloc.hugetlb 1 or 2 in GLIBC_TUNABLES") {
  CHECK_FALSE(TunablesUseHugePages(nullptr));
  CHECK_FALSE(TunablesUseHugePages(""));
  CHECK(TunablesUseHugePages("glibc.malloc.hugetlb=1"));
  CHECK(TunablesUseHugePages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"));
  CHECK_FALSE(TunablesUseHugePages("glibc.malloc.hugetlb=0"));
  CHECK_FALSE(TunablesUseHugePages("glibc.malloc.xhugetlb=1"));
  CHECK_FALSE(TunablesUseHugePages("glibc.malloc.hugetlb="));
}

TEST_CASE("ModelFileBytes reads the size of the file -m or --model names") {
  const std::string path = (std::filesystem::temp_directory_path() / "tilebank_model_file_bytes.onnx").string();
  std::ofstream(path) << std::string(1000, 'x');
  auto bytes = [](std::vector<std::string> words) {
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    return ModelFileBytes(static_cast<int>(argv.size()), argv.data());
  };
  CHECK(bytes({"tilebank", "run", "-m", path}) == 1000);
  CHECK(bytes({"tilebank", "run", "--repeat", "3", "--model", path, "--json"}) == 1000);
  CHECK(bytes({"tilebank", "tune", "--model=" + path}) == 1000);
  CHECK(bytes({"tilebank", "run", "-m" + path}) == 1000);
  CHECK(bytes({"tilebank", "run", "-m"}) == 0);  // the path missing
  CHECK(bytes({"tilebank", "run", "-m", path + ".absent"}) == 0);
  CHECK(bytes({"tilebank", "bank", "stats"}) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("the second start puts GLIBC_TUNABLES back as the user had it, for the processes it starts") {
  // As the first start leaves it: the tunable added, what was there before beside it.
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 1);
  setenv("TILEBANK_GLIBC_TUNABLES_BEFORE", "glibc.malloc.arena_max=2", 1);
  char name[] = "tilebank";
  char* argv[] = {name, nullptr};
  PrepareStartupEnvironment(1, argv);  // returns: nothing to execute again
  REQUIRE(std::getenv("GLIBC_TUNABLES") != nullptr);
  CHECK(std::string(std::getenv("GLIBC_TUNABLES")) == "glibc.malloc.arena_max=2");
  CHECK(std::getenv("TILEBANK_GLIBC_TUNABLES_BEFORE") == nullptr);
  // Unset before: unset again.
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  setenv("TILEBANK_GLIBC_TUNABLES_BEFORE", "", 1);
  PrepareStartupEnvironment(1, argv);
  CHECK(std::getenv("GLIBC_TUNABLES") == nullptr);
  CHECK(std::getenv("TILEBANK_GLIBC_TUNABLES_BEFORE") == nullptr);
}

}  // namespace tilebank::engine
