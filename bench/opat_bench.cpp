// The OPAT benchmark: for every operator of a list (default bench/opat_suite.json: 15 GEMM
// shapes, 8 convolutions, 6 large vector ops) it tunes with all modes and with Schedule alone,
// then measures side by side in one run, on the same inputs and harness (engine/runner):
// the default policy, both tuned winners, oneDNN, OpenBLAS and Halide's Adams2019
// autoscheduler (MatMul). GFLOP/s are set against the measured FMA peak, GB/s against the
// measured memory bandwidth, and the goals are checked at the end.
//
//   build/opat_bench [--ops FILE] [--trials N] [--only SUBSTRING] [--class gemm,conv,vector] [--seed S]
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "bench/adams2019_matmul.h"
#include "bench/machine_peaks.h"
#include "engine/backends/halide/halide_target.h"
#include "engine/catalog/template_registry.h"
#include "engine/core/conv_problem.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/host_facts.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/runner.h"
#include "engine/core/soc_version.h"
#include "engine/tuning/tuner.h"

namespace tilebank::bench {
namespace {

using engine::OpSpec;

enum class OpClass { kGemm, kConv, kVector };

OpClass ClassOf(const OpSpec& op) {
  if (op.op_type == "MatMul" || op.op_type == "Gemm" || op.op_type == "BatchMatMul") return OpClass::kGemm;
  if (op.op_type == "Conv") return OpClass::kConv;
  return OpClass::kVector;
}

// Work of one call: flops for cube ops, bytes that must cross memory for vector ops.
double Work(const OpSpec& op) {
  if (ClassOf(op) == OpClass::kGemm) return engine::AnalyzeGemm(op)->Flops();
  if (ClassOf(op) == OpClass::kConv) return engine::AnalyzeConv(op)->Flops();
  double bytes = 0;
  for (const auto& t : op.inputs) bytes += 4.0 * engine::Tensor::NumElements(t.shape);
  for (const auto& t : op.outputs) bytes += 4.0 * engine::Tensor::NumElements(t.shape);
  return bytes;
}

// The contenders, in table order.
enum Contender { kDefault, kSchedule, kAllModes, kOneDnn, kOpenBlas, kAdams, kCount };
const char* kNames[kCount] = {"default", "schedule", "all-modes", "oneDNN", "OpenBLAS", "Adams2019"};

struct Row {
  std::string name, shape, winner;  // winner: template of the all-modes winner
  OpClass cls = OpClass::kVector;
  double work = 0;
  std::optional<double> us[kCount];
  double tune_seconds = 0;
  double anchor = 0;  // probe measured in the rounds: FMA GFLOP/s, or (vector ops) scale GB/s over the op's bytes
};

std::string ShapeText(const OpSpec& op) {
  if (ClassOf(op) == OpClass::kGemm) {
    auto p = engine::AnalyzeGemm(op).value();
    return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K);
  }
  std::string s;
  for (auto d : op.inputs[0].shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The contenders' kernels are measured in kRounds rounds, round robin, with the final (longer)
// run options; a contender's time is the best of its round medians. On this VM a whole 0.2 s
// window now and then runs 2x slow (docs/PERFORMANCE.md, "Measurement stability"), and a
// round robin spreads that over all contenders instead of charging it to one. Each round also
// runs the op's anchor probe (FMA peak; for vector ops the scale probe over as many bytes as the
// op moves): this VM's memory bandwidth swings with its neighbours (25 to 53 GB/s at the start
// of runs on one day) and its FMA peak less so (182 to 232 GFLOP/s), so the anchor is measured in
// the same minutes as the kernels it rates. Cube ops keep the start-of-run peak when it is higher.
constexpr int kRounds = 3;

void MeasureRoundRobin(const engine::Runner& runner, std::vector<std::pair<Contender, std::unique_ptr<engine::Kernel>>>& kernels,
                       Row& row) {
  engine::RunOptions final_run;
  final_run.warmup = 3;
  final_run.min_samples = 15;
  final_run.max_samples = 200;
  final_run.target_seconds = 0.2;
  final_run.timeout_seconds = 60;
  std::vector<bool> failed(kernels.size(), false);
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (failed[i]) continue;
      const Contender contender = kernels[i].first;
      auto r = runner.Measure(*kernels[i].second, final_run);
      if (!r.ok) {
        std::fprintf(stderr, "  %s: %s\n", kNames[contender], r.failure.substr(0, 200).c_str());
        failed[i] = true;
        row.us[contender].reset();
        continue;
      }
      row.us[contender] = std::min(row.us[contender].value_or(INFINITY), r.time.median_us);
    }
    const int cores = engine::Host().cores;
    row.anchor = std::max(row.anchor, row.cls == OpClass::kVector ? ScaleGbs(cores, static_cast<size_t>(row.work / 8)) : FmaGflops(cores));
  }
}

Row BenchOp(const OpSpec& op, const engine::TuneOptions& base, const std::string& adams_plugin) {
  Row row;
  row.name = op.name;
  row.shape = ShapeText(op);
  row.cls = ClassOf(op);
  row.work = Work(op);
  auto runner = engine::Runner::Create(op, base.seed);
  if (!runner.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.name.c_str(), runner.status().message().c_str());
    return row;
  }
  auto templates = engine::TemplatesFor(op);
  if (!templates.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.name.c_str(), templates.status().message().c_str());
    return row;
  }
  const engine::OpTemplate& primary = *templates->primary;

  // Tune first (both ways), then measure every contender back to back.
  double t0 = Now();
  engine::TuneOptions schedule_only = base;
  schedule_only.modes = {TuneMode::kSchedule};
  auto sched = engine::TuneOp(op, schedule_only, nullptr, &runner.value());
  auto all = engine::TuneOp(op, base, nullptr, &runner.value());
  row.tune_seconds = Now() - t0;

  std::vector<std::pair<Contender, std::unique_ptr<engine::Kernel>>> kernels;
  auto add = [&](Contender c, Result<std::unique_ptr<engine::Kernel>> kernel) {
    if (kernel.ok()) kernels.emplace_back(c, std::move(kernel.value()));
    else std::fprintf(stderr, "  %s: %s\n", kNames[c], kernel.status().message().c_str());
  };
  auto build = [&](const engine::TuneOutcome& o) { return engine::TemplateById(o.template_id)->Build(op, o.policy); };
  add(kDefault, primary.Build(op, primary.DefaultPolicy(op)));
  if (sched.ok() && sched->found) add(kSchedule, build(sched.value()));
  if (all.ok() && all->found) {
    add(kAllModes, build(all.value()));
    row.winner = all->template_id;
  }
  for (auto [c, id] : {std::pair{kOneDnn, "impl.onednn"}, std::pair{kOpenBlas, "impl.openblas"}}) {
    const auto* library = engine::TemplateById(id);
    if (library->Supports(op).ok()) add(c, library->Build(op, library->DefaultPolicy(op)));
  }
  if (op.op_type == "MatMul") {
    double schedule_seconds = 0;
    add(kAdams, BuildAdams2019MatMul(op, adams_plugin, &schedule_seconds));
  }
  MeasureRoundRobin(runner.value(), kernels, row);
  if (all.ok() && all->found)
    std::fprintf(stderr, "  all-modes winner %s {%s}: %.1f us while tuning, %.1f us now\n", all->template_id.c_str(),
                 engine::PolicyText(all->policy).c_str(), all->best_time.median_us, row.us[kAllModes].value_or(NAN));
  return row;
}

double Rate(const Row& r, Contender c) { return r.us[c] ? r.work / (*r.us[c] * 1e-6) / 1e9 : NAN; }

std::string Cell(double v) {
  char buf[32];
  if (std::isnan(v)) return "-";
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void PrintHeader(OpClass cls) {
  const bool vector = cls == OpClass::kVector;
  std::printf("\n%s (%s; higher is better)\n", cls == OpClass::kGemm ? "GEMM" : cls == OpClass::kConv ? "Convolution" : "Vector ops",
              vector ? "GB/s" : "GFLOP/s");
  std::printf("%-24s %-16s", "op", cls == OpClass::kGemm ? "MxNxK" : "input");
  for (int c = 0; c < kCount; ++c) std::printf(" %9s", kNames[c]);
  std::printf(" %9s", vector ? "stream" : "FMA peak");
  std::printf("  %7s %7s  %s\n", vector ? "%bw" : "%peak", "tune s", "all-modes winner");
}

// What a row's rate is a percentage of: the probe measured beside its kernels (cube ops: or
// the start-of-run FMA peak, when higher).
double Anchor(const Row& r, const MachinePeaks& peaks) {
  return r.cls == OpClass::kVector ? r.anchor : std::max(r.anchor, peaks.fma_gflops);
}

void PrintRow(const Row& r, const MachinePeaks& peaks) {
  std::printf("%-24s %-16s", r.name.substr(0, 24).c_str(), r.shape.substr(0, 16).c_str());
  for (int c = 0; c < kCount; ++c) std::printf(" %9s", Cell(Rate(r, static_cast<Contender>(c))).c_str());
  const double anchor = Anchor(r, peaks);
  std::printf(" %9s", Cell(anchor).c_str());
  std::printf("  %6s%% %7.1f  %s\n", Cell(100 * Rate(r, kAllModes) / anchor).c_str(), r.tune_seconds, r.winner.c_str());
  std::fflush(stdout);
}

// Geometric mean of time(b) / time(a) (a's speedup over b) over the rows of `cls` (all when
// nullopt) where both ran; `count` receives how many rows that was.
double GeomeanSpeedup(const std::vector<Row>& rows, std::optional<OpClass> cls, Contender a, Contender b, int* count) {
  double log_sum = 0;
  *count = 0;
  for (const auto& r : rows) {
    if ((cls && r.cls != *cls) || !r.us[a] || !r.us[b]) continue;
    log_sum += std::log(*r.us[b] / *r.us[a]);
    ++*count;
  }
  return *count ? std::exp(log_sum / *count) : NAN;
}

void Goal(const char* what, double value, double goal, const char* unit, int count) {
  if (count == 0) {
    std::printf("  %-58s       - (goal >= %.2f%s, no operator of this kind measured)\n", what, goal, unit);
    return;
  }
  std::printf("  %-58s %7.2f%s (goal >= %.2f%s, n=%d)  %s\n", what, value, unit, goal, unit, count, value >= goal ? "met" : "NOT MET");
}

void PrintGoals(const std::vector<Row>& rows, const MachinePeaks& peaks) {
  std::printf("\nGoals (ratios are geometric means of per-op time ratios, measured in this run)\n");
  auto ratio = [&](const char* what, std::optional<OpClass> cls, Contender a, Contender b, double goal) {
    int n = 0;
    double v = GeomeanSpeedup(rows, cls, a, b, &n);
    Goal(what, v, goal, "x", n);
  };
  ratio("all modes vs oneDNN, GEMM suite", OpClass::kGemm, kAllModes, kOneDnn, 1.05);
  ratio("Schedule only (Halide kernels) vs oneDNN, GEMM suite", OpClass::kGemm, kSchedule, kOneDnn, 0.9);
  ratio("Schedule only vs Adams2019, GEMM suite", OpClass::kGemm, kSchedule, kAdams, 1.3);
  ratio("all modes vs oneDNN, convolutions", OpClass::kConv, kAllModes, kOneDnn, 1.0);
  ratio("all modes vs oneDNN, vector ops", OpClass::kVector, kAllModes, kOneDnn, 1.0);
  int n = 0;
  double worst = INFINITY;
  n = 0;
  for (const auto& r : rows) {
    if (r.cls != OpClass::kGemm || r.work < 2.0 * 1024 * 1024 * 1024 || !r.us[kSchedule]) continue;
    worst = std::min(worst, 100 * Rate(r, kSchedule) / Anchor(r, peaks));
    ++n;
  }
  Goal("Schedule only, % of FMA peak, GEMM >= 1024^3 (worst)", n ? worst : NAN, 85, "%", n);
  worst = INFINITY;
  n = 0;
  for (const auto& r : rows) {
    if (r.cls != OpClass::kVector || !r.us[kAllModes]) continue;
    worst = std::min(worst, 100 * Rate(r, kAllModes) / Anchor(r, peaks));
    ++n;
  }
  Goal("vector ops, % of the bandwidth measured beside them (worst)", n ? worst : NAN, 80, "%", n);
  ratio("tuned (all modes) vs default policy, every op", std::nullopt, kAllModes, kDefault, 1.3);
  ratio("tuned (Schedule only) vs default policy, every op", std::nullopt, kSchedule, kDefault, 1.3);
}

}  // namespace
}  // namespace tilebank::bench

int main(int argc, char** argv) {
  using namespace tilebank;
  CLI::App app("OPAT benchmark: tuned kernels against oneDNN, OpenBLAS, Adams2019 and the default policy");
  std::string ops_file = std::string(TILEBANK_SOURCE_DIR) + "/bench/opat_suite.json";
  std::string only;
  engine::TuneOptions options;
  app.add_option("--ops", ops_file, "ATC-style operator list")->check(CLI::ExistingFile);
  app.add_option("--trials", options.trials, "trials per operator and tuning run")->check(CLI::Range(2, 100000));
  app.add_option("--only", only, "bench only the operators whose name contains this");
  std::string classes;
  app.add_option("--class", classes, "bench only these classes: gemm, conv, vector (comma-separated)");
  app.add_option("--seed", options.seed, "seed of inputs and strategies");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto ops = engine::ReadOpList(ops_file);
  if (!ops.ok()) {
    std::fprintf(stderr, "error: %s\n", ops.status().message().c_str());
    return 2;
  }
  const auto& host = engine::Host();
  std::printf("host: %s, %d cores; Halide target %s; %d trials per tuning run\n", HostSocVersion().c_str(), host.cores,
              engine::HostHalideTarget().to_string().c_str(), options.trials);
  auto peaks = bench::MeasureMachinePeaks(host.cores);
  std::printf("measured peaks: FMA %.1f GFLOP/s (%.1f per core), bandwidth %.1f GB/s scale (read+write), %.1f GB/s read\n",
              peaks.fma_gflops, peaks.fma_gflops_core, peaks.scale_gbs, peaks.read_gbs);
  std::vector<bench::Row> rows;
  std::fflush(stdout);
  // Rows are printed as they finish (the list is grouped by class; a new class starts a table).
  std::optional<bench::OpClass> table;
  for (const auto& op : ops.value()) {
    if (!only.empty() && op.name.find(only) == std::string::npos) continue;
    const bench::OpClass cls = bench::ClassOf(op);
    if (!classes.empty() && classes.find(cls == bench::OpClass::kGemm ? "gemm" : cls == bench::OpClass::kConv ? "conv" : "vector") == std::string::npos)
      continue;
    if (table != cls) bench::PrintHeader(cls);
    table = cls;
    std::fprintf(stderr, "%s ...\n", op.name.c_str());
    rows.push_back(bench::BenchOp(op, options, TILEBANK_ADAMS2019_PLUGIN));
    bench::PrintRow(rows.back(), peaks);
  }
  bench::PrintGoals(rows, peaks);
  return 0;
}
