// The evidence for the built-in choices (engine/catalog/builtin_choice.h): for every operator of
// the lists (default: ResNet-50's, MobileNetV2's depthwise, ResNeXt's and RegNet's grouped
// and BERT-base's operators in data/), the
// primary template's analytical default policy and oneDNN are measured side by side, round robin,
// on the same inputs and harness (engine/runner). Times are summed per op class, and each class's
// faster side is set against the choice the built-in table makes; a class where the table picks
// the slower side is marked "TABLE LOSES".
//
//   build/builtin_choice_bench [--ops FILE]... [--rounds 3]
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <map>

#include "engine/catalog/builtin_choice.h"
#include "engine/catalog/template_registry.h"
#include "engine/backends/library_impls.h"
#include "engine/tuning/runner.h"
#include "engine/core/soc_version.h"
#include "engine/backends/op_template.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::bench {
namespace {

using engine::OpSpec;

struct ClassTotals {
  int ops = 0;
  double template_us = 0, onednn_us = 0;
  bool table_onednn = false;
};

// Best of `rounds` round-robin medians of each kernel; +inf for one that fails.
std::vector<double> RoundRobin(const engine::Runner& runner, std::vector<std::unique_ptr<engine::Kernel>>& kernels, int rounds) {
  engine::RunOptions run;
  run.warmup = 3;
  run.min_samples = 10;
  run.target_seconds = 0.1;
  run.timeout_seconds = 30;
  std::vector<double> best(kernels.size(), INFINITY);
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!kernels[i]) continue;
      auto result = runner.Measure(*kernels[i], run);
      if (result.ok) best[i] = std::min(best[i], result.time.median_us);
      else kernels[i].reset();
    }
  return best;
}

}  // namespace
}  // namespace tilebank::bench

int main(int argc, char** argv) {
  using namespace tilebank;
  using namespace tilebank::bench;
  CLI::App app{"the built-in choices per op class: template default against oneDNN, side by side"};
  std::vector<std::string> files = {TILEBANK_SOURCE_DIR "/data/ops_resnet50.json", TILEBANK_SOURCE_DIR "/data/ops_mobilenet_v2_dw.json",
                                    TILEBANK_SOURCE_DIR "/data/ops_grouped_conv.json", TILEBANK_SOURCE_DIR "/data/ops_bert_base.json",
                                    TILEBANK_SOURCE_DIR "/data/ops_pooling.json"};
  int rounds = 3;
  app.add_option("--ops", files, "ATC-style operator lists");
  app.add_option("--rounds", rounds, "round-robin rounds (the best round counts)")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);

  std::printf("soc_version %s\n\n%-44s %-16s %12s %12s\n", HostSocVersion().c_str(), "operator", "class", "default us", "oneDNN us");
  std::map<std::string, ClassTotals> classes;
  for (const auto& file : files) {
    auto ops = engine::ReadOpList(file);
    if (!ops.ok()) {
      std::fprintf(stderr, "%s\n", ops.status().message().c_str());
      return 2;
    }
    for (const OpSpec& op : *ops) {
      auto templates = engine::TemplatesFor(op);
      if (!templates.ok() || !engine::OneDnnImpl().Supports(op).ok()) continue;  // nothing to choose between
      auto runner = engine::Runner::Create(op, 1);
      if (!runner.ok()) continue;
      std::vector<std::unique_ptr<engine::Kernel>> kernels(2);
      if (auto k = templates->primary->Build(op, templates->primary->DefaultPolicy(op)); k.ok()) kernels[0] = std::move(k.value());
      if (auto k = engine::OneDnnImpl().Build(op, engine::OneDnnImpl().DefaultPolicy(op)); k.ok()) kernels[1] = std::move(k.value());
      const std::vector<double> us = RoundRobin(*runner, kernels, rounds);
      if (!std::isfinite(us[0]) || !std::isfinite(us[1])) continue;
      const std::string cls = engine::OpClassOf(op);
      ClassTotals& c = classes[cls];
      c.ops++;
      c.template_us += us[0];
      c.onednn_us += us[1];
      c.table_onednn = engine::BuiltinChoiceFor(op, engine::DefaultPolicies::kBuiltin).tmpl == &engine::OneDnnImpl();
      std::printf("%-44s %-16s %12.1f %12.1f\n", op.name.substr(0, 44).c_str(), cls.c_str(), us[0], us[1]);
    }
  }
  std::printf("\n%-20s %4s %14s %14s %9s %-8s %-8s\n", "class", "ops", "default us", "oneDNN us", "dflt/dnn", "faster", "table");
  int losses = 0;
  for (const auto& [cls, c] : classes) {
    const bool onednn_faster = c.onednn_us < c.template_us;
    const bool loses = onednn_faster != c.table_onednn;
    losses += loses;
    std::printf("%-20s %4d %14.1f %14.1f %9.2f %-8s %-8s%s\n", cls.c_str(), c.ops, c.template_us, c.onednn_us, c.template_us / c.onednn_us,
                onednn_faster ? "oneDNN" : "default", c.table_onednn ? "oneDNN" : "default", loses ? "  TABLE LOSES" : "");
  }
  std::printf("\n%d of %zu classes where the table picks the slower side\n", losses, classes.size());
  return 0;
}
