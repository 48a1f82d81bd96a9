// Measures the whole Schedule-mode space of one operator (every valid config of its primary
// template, layout knobs at their defaults) and writes it as a table the strategy replay reads:
//
//   build/space_table --ops data/ops_bert_base.json --name attention_output --out data/spaces/X.csv
//
// The file starts with '#' lines (the op description, template, host) followed by a CSV header of
// the knob names plus median_us, spread_us, status; a failed config has median_us "inf".
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "bench/space_table_format.h"
#include "engine/catalog/template_registry.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/runner.h"
#include "engine/core/soc_version.h"
#include "base/json_text.h"

int main(int argc, char** argv) {
  using namespace tilebank;
  CLI::App app("Measure every config of an operator's Schedule space into a table");
  std::string ops_file, name, out_file;
  bool count_only = false;
  app.add_option("--ops", ops_file, "ATC-style operator list")->required()->check(CLI::ExistingFile);
  app.add_option("--name", name, "the operator's name in the list")->required();
  app.add_option("--out", out_file, "the table to write (CSV)");
  app.add_flag("--count", count_only, "only print how many valid configs the space has");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // The table keeps the description as written; the op is parsed from that same description.
  auto description = bench::FindOpDescription(ops_file, name);
  auto parsed = description.ok() ? engine::ParseOpSpec(description.value(), 0) : Result<engine::OpSpec>(description.status());
  if (!parsed.ok() && description.ok()) parsed = parsed.status().WithContext(ops_file);
  if (!parsed.ok()) {
    std::fprintf(stderr, "error: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const engine::OpSpec* op = &parsed.value();
  auto templates = engine::TemplatesFor(*op);
  if (!templates.ok()) {
    std::fprintf(stderr, "error: %s\n", templates.status().message().c_str());
    return 2;
  }
  const engine::OpTemplate& t = *templates->primary;
  const engine::SearchSpace space = bench::ScheduleSpace(t, *op);
  const auto configs = space.ValidConfigs();
  std::printf("%s: %s, %zu valid configs of %llu\n", name.c_str(), t.id(), configs.size(),
              static_cast<unsigned long long>(space.Cardinality()));
  if (count_only) return 0;
  if (out_file.empty()) {
    std::fprintf(stderr, "error: --out is required unless --count\n");
    return 2;
  }
  auto runner = engine::Runner::Create(*op);
  if (!runner.ok()) {
    std::fprintf(stderr, "error: %s\n", runner.status().message().c_str());
    return 2;
  }
  // Short runs: thousands of configs; the median of a few samples ranks them well enough.
  engine::RunOptions run;
  run.warmup = 1;
  run.min_samples = 5;
  run.target_seconds = 0.03;
  const std::string tmp = out_file + ".tmp";
  std::ofstream out(tmp);
  out << "# op: " << DumpJson(*description) << "\n# template: " << t.id() << " " << t.version() << "\n# host: " << HostSocVersion() << "\n";
  for (const auto& k : space.knobs) out << k.name << ",";
  out << "median_us,spread_us,status\n";
  auto start = std::chrono::steady_clock::now();
  size_t done = 0;
  for (const auto& c : configs) {
    const engine::Policy policy = space.PolicyOf(c);
    auto kernel = t.Build(*op, policy);
    engine::RunResult r;
    if (kernel.ok()) r = runner->Measure(*kernel.value(), run);
    else r.failure = kernel.status().message();
    out << bench::ConfigKey(space, c) << ",";
    if (r.ok) out << r.time.median_us << "," << r.time.spread_us << ",ok\n";
    else out << "inf,0," << bench::CsvSafe(r.failure.substr(0, 60)) << "\n";
    if (++done % 100 == 0) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "%zu/%zu configs, %.0f s\n", done, configs.size(), s);
    }
  }
  out.close();
  std::rename(tmp.c_str(), out_file.c_str());
  std::printf("wrote %s\n", out_file.c_str());
  return 0;
}
