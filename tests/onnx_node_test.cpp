// Correctness beyond our own tests: every ONNX backend node test (libonnx-testdata) of an
// operator the engine supports runs through the kernels with the default policy and with a
// tuned policy, and is compared with the expected output the ONNX project ships. A case the
// engine refuses (an attribute or layout it does not implement) is counted with its reason; a
// case that runs must match. The pass counts are printed and held to a floor. (In ONNX 1.12's
// data, test_reduce_sum_negative_axes_keepdims_random ships an empty axes tensor with
// noop_with_empty_axes, so it passes as the no-op it describes, not as a negative-axes case.)
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/catalog/template_registry.h"
#include "engine/core/op_spec.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/tuner.h"
#include "tests/onnx_node_case.h"

namespace tilebank::testing {
namespace {

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

const std::set<std::string> kSupported = {"MatMul", "Gemm", "Conv", "Softmax", "LayerNormalization", "ReduceSum", "ReduceMean",
                                          "ReduceMax", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Gelu",
                                          "MaxPool", "AveragePool", "GlobalAveragePool"};

std::vector<std::filesystem::path> SupportedCases() {
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(kNodeTests))
    if (kSupported.count(OnnxNodeOpType(e.path()))) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// Empty when `got` matches `expected` within fp32 tolerances (ONNX's rtol 1e-3, atol 1e-5).
std::string Mismatch(const engine::Tensor& got, const engine::Tensor& expected) {
  if (got.shape != expected.shape) return "output shape differs";
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.data[i], e = expected.data[i];
    if (!(std::fabs(g - e) <= 1e-5 + 1e-3 * std::fabs(e)))
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", expected " + std::to_string(e);
  }
  return "";
}

// Runs `policy` of `t` on the case's inputs; empty when the output matches.
std::string RunCase(const engine::OpTemplate& t, const engine::OpSpec& op, const engine::Policy& policy, const OnnxNodeCase& c) {
  auto kernel = t.Build(op, policy);
  if (!kernel.ok()) return "build: " + kernel.status().message();
  std::vector<const engine::Tensor*> inputs;
  for (const auto& in : c.inputs) inputs.push_back(&in);
  engine::Tensor got;
  if (Status s = kernel.value()->Prepare(inputs); !s.ok()) return "prepare: " + s.message();
  if (Status s = kernel.value()->Run(); !s.ok()) return "run: " + s.message();
  if (Status s = kernel.value()->Fetch(&got); !s.ok()) return "fetch: " + s.message();
  return Mismatch(got, c.expected);
}

struct Tally {
  int cases = 0, pass = 0;
  int not_default = 0;  // tuned runs whose winner is another policy or template than the default
  std::map<std::string, std::string> refused;  // case -> why the engine does not take it
};

// `tuned`: run a short Schedule-mode tuning and check its winner instead of the default policy.
Tally RunAll(bool tuned) {
  Tally tally;
  for (const auto& dir : SupportedCases()) {
    ++tally.cases;
    auto c = LoadOnnxNodeCase(dir);
    if (!c.ok()) {
      tally.refused[dir.filename().string()] = c.status().message();
      continue;
    }
    CAPTURE(c->name);
    auto op = engine::ParseOpSpec(c->description, 0);
    auto templates = op.ok() ? engine::TemplatesFor(op.value()) : Result<engine::OpTemplates>(op.status());
    if (!templates.ok()) {
      tally.refused[c->name] = templates.status().message();
      continue;
    }
    const engine::OpTemplate* t = templates->primary;
    engine::Policy policy = t->DefaultPolicy(op.value());
    if (tuned) {
      engine::TuneOptions options;
      options.trials = 6;
      options.modes = {TuneMode::kSchedule, TuneMode::kFormat};
      options.run.target_seconds = 0.005;
      options.run.min_samples = 2;
      auto outcome = engine::TuneOp(op.value(), options);
      REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
      REQUIRE_MESSAGE(outcome->found, "no candidate ran");
      if (outcome->template_id != t->id() || outcome->policy != policy) ++tally.not_default;
      t = engine::TemplateById(outcome->template_id);
      policy = outcome->policy;
    }
    std::string mismatch = RunCase(*t, op.value(), policy, c.value());
    CHECK_MESSAGE(mismatch.empty(), c->name << " (" << t->id() << " " << engine::PolicyText(policy) << "): " << mismatch);
    if (mismatch.empty()) ++tally.pass;
  }
  return tally;
}

void Report(const char* what, const Tally& t, bool tuned) {
  std::string refused;
  for (const auto& [name, why] : t.refused) refused += "\n  refused " + name + ": " + why;
  std::string tuned_note = tuned ? "; " + std::to_string(t.not_default) + " of the tuned winners are not the default policy" : "";
  MESSAGE("ONNX node tests, " << std::string(what) << ": " << t.pass << " of " << t.cases << " pass, " << t.refused.size() << " refused"
                              << tuned_note << refused);
}

// Passes measured when this test was written; fewer means a regression.
constexpr int kMinPasses = 113;

// Runs every node test with the default or a tuned policy and checks the pass count.
void CheckAll(bool tuned) {
  REQUIRE_MESSAGE(std::filesystem::is_directory(kNodeTests), "install libonnx-testdata (scripts/setup.sh does)");
  Tally t = RunAll(tuned);
  Report(tuned ? "tuned policy" : "default policy", t, tuned);
  CHECK(t.pass >= kMinPasses);
  CHECK(t.pass + static_cast<int>(t.refused.size()) == t.cases);
}

TEST_CASE("ONNX node tests pass with the default policy") { CheckAll(false); }

TEST_CASE("ONNX node tests pass with a tuned policy") { CheckAll(true); }

}  // namespace
}  // namespace tilebank::testing
