// Every model of ONNX's own test data (libonnx-testdata: node, pytorch-converted, pytorch-operator,
// simple) runs through `tilebank run --data`, judged as ONNX's backend runner judges it (dtype and
// shape equal, integers exact, floats within rtol 1e-3 and atol 1e-7: engine/core/tensor_compare.h;
// a case that passes only by `run --data`'s float32-rounding allowance for whole models fails).
// Every case must match, except those tests/onnx_backend_refusals.tsv lists, each with why: those
// must be refused (exit 2 with a message). A case that differs, crashes, fails with an internal
// error (exit 3) or is refused without being listed fails the test, and so does a listed case that
// now matches: the list is exactly what is refused, so a case that turns from a match into a
// refusal fails even when another gains.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const char* kTestData = "/usr/share/libonnx-testdata/data";

// "group/case" -> why, from tests/onnx_backend_refusals.tsv (# comments, blank lines).
const std::map<std::string, std::string>& ExpectedRefusals() {
  static const std::map<std::string, std::string> refusals = [] {
    std::map<std::string, std::string> r;
    std::ifstream in(SourcePath("tests/onnx_backend_refusals.tsv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t tab = line.find('\t');
      if (tab != std::string::npos) r[line.substr(0, tab)] = line.substr(tab + 1);
    }
    return r;
  }();
  return refusals;
}

struct Counts {
  int match = 0, refused = 0;
};

// Runs the cases of `group` whose name's first letter after "test_" is in [first, last].
Counts RunGroup(const std::string& group, char first, char last) {
  REQUIRE_MESSAGE(std::filesystem::is_directory(kTestData), "install libonnx-testdata (scripts/setup.sh does)");
  REQUIRE_MESSAGE(!ExpectedRefusals().empty(), "tests/onnx_backend_refusals.tsv is missing or empty");
  Counts c;
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(kTestData) + "/" + group)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string(), id = group + "/" + name;
    const char key = name.size() > 5 ? name[5] : 'a';  // test_<letter>
    if (key < first || key > last || !std::filesystem::is_directory(dir / "test_data_set_0")) continue;
    auto r = RunCli("run -m " + (dir / "model.onnx").string() + " --data " + (dir / "test_data_set_0").string() + " --repeat 1 --warmup 0");
    const auto listed = ExpectedRefusals().find(id);
    if (r.exit_code == 0) {
      ++c.match;
      // ONNX's own rule, not the whole-model fallback for float32 rounding (model_session.h).
      CHECK_MESSAGE(r.out.find("float32 rounding") == std::string::npos, id << " matches only within 1e-5 of its output's largest value, not ONNX's atol: " << r.out);
      CHECK_MESSAGE(listed == ExpectedRefusals().end(), id << " now matches: take it off tests/onnx_backend_refusals.tsv (listed: " << (listed != ExpectedRefusals().end() ? listed->second : "") << ")");
    } else if (r.exit_code == 2 && r.err.rfind("tilebank: error: ", 0) == 0) {
      ++c.refused;
      CHECK_MESSAGE(listed != ExpectedRefusals().end(), id << " is refused and not listed in tests/onnx_backend_refusals.tsv: " << r.err);
    } else {
      // 1: an output differs; 3: an internal error; a crash (134, 139) or anything else.
      FAIL_CHECK(id << " exited " << r.exit_code << ": " << r.out << r.err);
    }
  }
  MESSAGE(group << " [" << std::string(1, first) << "-" << std::string(1, last) << "]: " << c.match << " match, " << c.refused << " refused");
  CHECK_MESSAGE(c.match > 0, group << " [" << first << "-" << last << "]: no case ran");
  return c;
}

TEST_CASE("onnx test data: node tests a-l run through tilebank run --data") { RunGroup("node", 'a', 'l'); }

TEST_CASE("onnx test data: node tests m-z run through tilebank run --data") { RunGroup("node", 'm', 'z'); }

TEST_CASE("onnx test data: pytorch-converted, pytorch-operator and simple models run through tilebank run --data") {
  for (const char* group : {"pytorch-converted", "pytorch-operator", "simple"}) RunGroup(group, 'A', 'z');
}

TEST_CASE("onnx test data: every case tests/onnx_backend_refusals.tsv lists exists") {
  for (const auto& entry : ExpectedRefusals()) {
    const std::string& id = entry.first;
    CAPTURE(id);
    CHECK(std::filesystem::is_directory(std::string(kTestData) + "/" + id + "/test_data_set_0"));
    CHECK_MESSAGE(!entry.second.empty(), "every listed case says why it is refused");
  }
}

}  // namespace
}  // namespace tilebank::testing
