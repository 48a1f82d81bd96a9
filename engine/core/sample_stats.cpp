#include "engine/core/sample_stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tilebank::engine {

namespace {

// The q-quantile of sorted, non-empty `x`, interpolated between its neighbours.
double Quantile(const std::vector<double>& x, double q) {
  const double h = q * static_cast<double>(x.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(h));
  const size_t above = std::min(below + 1, x.size() - 1);
  return x[below] + (h - static_cast<double>(below)) * (x[above] - x[below]);
}

}  // namespace

SampleSummary Summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const double lower = Quantile(samples, 0.25), upper = Quantile(samples, 0.75);
  return {Quantile(samples, 0.5), upper - lower, lower, upper};
}

double FastestOf(int runs, int warmup, const std::function<bool()>& run) {
  double fastest = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!run()) return 1e30;
    if (i >= warmup) fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return fastest;
}

std::vector<double> FastestOfAlternated(int rounds, int runs, int warmup, const std::vector<std::function<bool()>>& ways) {
  std::vector<double> fastest(ways.size(), 1e30);
  for (int round = 0; round < rounds; ++round)
    for (size_t k = 0; k < ways.size(); ++k) fastest[k] = std::min(fastest[k], FastestOf(runs, warmup, ways[k]));
  return fastest;
}

}  // namespace tilebank::engine
