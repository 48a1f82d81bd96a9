// Tuning efficiency the Kernel Tuner way: replays the search strategies over measured whole
// spaces (data/spaces/*.csv, from space_table) many times and scores each at fixed budgets:
//
//   score = (E[best of random] - E[best of strategy]) / (E[best of random] - optimum)
//
// where E[best of random] is the exact expectation of the best of b distinct random configs
// (no sampling noise), so 0 is random search and 1 finds the optimum every time.
//
//   build/strategy_replay [--runs 100] data/spaces/*.csv
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/space_table_format.h"
#include "engine/catalog/template_registry.h"
#include "engine/core/op_semantics.h"
#include "engine/tuning/search_strategy.h"

namespace tilebank::bench {
namespace {

const int kBudgets[] = {25, 50, 100};

// E[min of b distinct draws] from `sorted` (ascending): the i-th smallest (0-based) is the
// minimum with probability C(n-1-i, b-1) / C(n, b).
double ExpectedRandomBest(const std::vector<double>& sorted, int b) {
  const int n = static_cast<int>(sorted.size());
  if (b >= n) return sorted[0];
  double expected = 0;
  double p = static_cast<double>(b) / n;  // P(min is the smallest)
  for (int i = 0; i + b <= n; ++i) {
    expected += p * sorted[i];
    p *= static_cast<double>(n - 1 - i - (b - 1)) / (n - 1 - i);
  }
  return expected;
}

// Mean best cost after each budget over `runs` replays of `kind`.
std::vector<double> Replay(engine::StrategyKind kind, const engine::SearchSpace& space, const std::map<std::string, double>& cost,
                           double worst, int runs) {
  std::vector<double> sums(std::size(kBudgets), 0);
  const int budget = kBudgets[std::size(kBudgets) - 1];
  for (int run = 0; run < runs; ++run) {
    auto strategy = engine::MakeStrategy(kind, space, 1000 + run);
    double best = INFINITY;
    int spent = 0;
    size_t next_budget = 0;
    while (spent < budget) {
      auto batch = strategy->Propose(std::min<size_t>(strategy->PreferredBatch(), budget - spent));
      if (batch.empty()) break;
      for (const auto& c : batch) {
        auto it = cost.find(ConfigKey(space, c));
        double v = it == cost.end() ? INFINITY : it->second;
        strategy->Observe(c, v);
        best = std::min(best, v);
        ++spent;
        if (next_budget < std::size(kBudgets) && spent == kBudgets[next_budget]) sums[next_budget++] += std::isfinite(best) ? best : worst;
      }
    }
    for (; next_budget < std::size(kBudgets); ++next_budget) sums[next_budget] += std::isfinite(best) ? best : worst;
  }
  for (auto& s : sums) s /= runs;
  return sums;
}

}  // namespace
}  // namespace tilebank::bench

int main(int argc, char** argv) {
  using namespace tilebank;
  CLI::App app("Replay search strategies over measured spaces and score them against random search");
  std::vector<std::string> tables;
  int runs = 100;
  app.add_option("tables", tables, "space tables (data/spaces/*.csv)")->required()->check(CLI::ExistingFile);
  app.add_option("--runs", runs, "replays per strategy")->check(CLI::Range(1, 100000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::printf("%-28s %-9s %6s %10s  %-10s", "op", "class", "space", "optimum us", "strategy");
  for (int b : bench::kBudgets) std::printf("  best@%-4d score@%-4d", b, b);
  std::printf("\n");
  for (const auto& path : tables) {
    auto table = bench::ReadSpaceTable(path);
    if (!table.ok()) {
      std::fprintf(stderr, "error: %s\n", table.status().message().c_str());
      return 2;
    }
    auto op = engine::ParseOpSpec(table->op, 0);
    const engine::OpTemplate* t = engine::TemplateById(table->template_id);
    if (!op.ok() || !t) {
      std::fprintf(stderr, "error: %s: the op or template %s is not known to this build\n", path.c_str(), table->template_id.c_str());
      return 2;
    }
    const engine::SearchSpace space = bench::ScheduleSpace(*t, op.value());
    std::string header;
    for (const auto& k : space.knobs) header += (header.empty() ? "" : ",") + k.name;
    const auto valid = space.ValidConfigs();
    if (header != table->knob_header || valid.size() != table->cost.size()) {
      std::fprintf(stderr, "error: %s was measured over another space (%zu configs; this build has %zu): measure it again\n", path.c_str(),
                   table->cost.size(), valid.size());
      return 2;
    }
    std::vector<double> sorted;
    for (const auto& [key, v] : table->cost) sorted.push_back(v);
    std::sort(sorted.begin(), sorted.end());
    // Failed configs count as the slowest working one (a strategy that only found failures).
    double worst = 0;
    for (double v : sorted)
      if (std::isfinite(v)) worst = v;
    for (auto& v : sorted)
      if (!std::isfinite(v)) v = worst;
    const double optimum = sorted[0];
    const bool cube = engine::IsCubeOp(op->op_type);
    for (auto kind : {engine::StrategyKind::kGenetic, engine::StrategyKind::kMcts, engine::StrategyKind::kRandom}) {
      auto best = bench::Replay(kind, space, table->cost, worst, runs);
      std::printf("%-28s %-9s %6zu %10.1f  %-10s", op->name.substr(0, 28).c_str(), cube ? "cube/GA" : "vector/RL", sorted.size(), optimum,
                  engine::StrategyName(kind));
      for (size_t i = 0; i < std::size(bench::kBudgets); ++i) {
        double random = bench::ExpectedRandomBest(sorted, bench::kBudgets[i]);
        double score = random > optimum ? (random - best[i]) / (random - optimum) : 1.0;
        std::printf("  %9.1f %9.2f ", best[i], score);
      }
      std::printf("\n");
    }
    std::printf("%-28s %-9s %6s %10s  %-10s", "", "", "", "", "E[random]");
    for (int b : bench::kBudgets) std::printf("  %9.1f %9s ", bench::ExpectedRandomBest(sorted, b), "0.00");
    std::printf("\n");
  }
  return 0;
}
