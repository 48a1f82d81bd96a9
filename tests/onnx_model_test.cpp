// Every model of ONNX's own test data (libonnx-testdata: node, pytorch-converted, pytorch-operator,
// simple) runs through `tilebank run --data`: those whose operators the executor supports must
// match the expected outputs, the rest be refused (exit 2, with a message); the test prints how
// many pass and why the rest are refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const char* kTestData = "/usr/share/libonnx-testdata/data";

struct Counts {
  int pass = 0, differ = 0, refused = 0;
  std::map<std::string, int> reasons;  // the error's first words -> models
};

Counts RunGroup(const std::string& group, char first, char last) {
  Counts c;
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(kTestData) + "/" + group)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    const char key = name.size() > 5 ? name[5] : 'a';  // test_<letter>
    if (key < first || key > last || !std::filesystem::is_directory(dir / "test_data_set_0")) continue;
    auto r = RunCli("run -m " + (dir / "model.onnx").string() + " --data " + (dir / "test_data_set_0").string() + " --repeat 1 --warmup 0");
    if (r.exit_code == 0) {
      ++c.pass;
    } else if (r.exit_code == 1) {
      ++c.differ;
      MESSAGE(name << " differs: " << r.out);
    } else {
      // A refusal is exit 2 with a message; a crash (134, 139) or any other code is a failure.
      CHECK_MESSAGE(r.exit_code == 2, name << " exited " << r.exit_code << ": " << r.err);
      CHECK_MESSAGE(r.err.rfind("tilebank: error: ", 0) == 0, name << " was refused without a message: " << r.err);
      ++c.refused;
      std::string why = r.err.substr(0, r.err.find('\n'));
      const size_t model = why.find("model.onnx");
      if (model != std::string::npos) why = why.substr(model + 10);
      c.reasons[why.substr(0, 60)]++;
    }
  }
  std::string top;
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [why, n] : c.reasons) sorted.push_back({-n, why});
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size() && i < 8; ++i) top += "\n  " + std::to_string(-sorted[i].first) + " x" + sorted[i].second;
  MESSAGE(group << " [" << std::string(1, first) << "-" << std::string(1, last) << "]: " << c.pass << " pass, " << c.differ << " differ, " << c.refused
                << " refused; most common refusals:" << top);
  return c;
}

TEST_CASE("onnx test data: node tests a-l run through tilebank run --data") {
  REQUIRE_MESSAGE(std::filesystem::is_directory(kTestData), "install libonnx-testdata (scripts/setup.sh does)");
  Counts c = RunGroup("node", 'a', 'l');
  CHECK(c.differ == 0);
  CHECK(c.pass >= 372);  // floors that only rise: the counts printed above
}

TEST_CASE("onnx test data: node tests m-z run through tilebank run --data") {
  Counts c = RunGroup("node", 'm', 'z');
  CHECK(c.differ == 0);
  CHECK(c.pass >= 511);
}

TEST_CASE("onnx test data: pytorch-converted, pytorch-operator and simple models run through tilebank run --data") {
  int pass = 0;
  for (const char* group : {"pytorch-converted", "pytorch-operator", "simple"}) {
    Counts c = RunGroup(group, 'A', 'z');
    CHECK(c.differ == 0);
    pass += c.pass;
  }
  CHECK(pass >= 125);
}

}  // namespace
}  // namespace tilebank::testing
