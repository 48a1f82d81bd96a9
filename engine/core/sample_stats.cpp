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

namespace {

// P(X <= k) for X ~ Binomial(n, 1/2).
double BinomialHalfCdf(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return sum;
}

}  // namespace

PairedDifference PairedDifferenceOf(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n == 0) return {};
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = a[i] - b[i];
  std::sort(d.begin(), d.end());
  // The interval [d(k), d(n+1-k)] (1-based) covers the median with probability 1 - 2 P(X <= k-1):
  // the largest k with that at least 95%, else k = 1.
  int k = 1;
  while (k + 1 <= static_cast<int>(n + 1) / 2 && 2 * BinomialHalfCdf(static_cast<int>(n), k) <= 0.05) ++k;
  PairedDifference p;
  p.pairs = static_cast<int>(n);
  p.median = Quantile(d, 0.5);
  p.low = d[k - 1];
  p.high = d[n - k];
  return p;
}

bool FasterBeyondSpread(const PairedDifference& gain, double baseline) {
  return gain.pairs > 0 && gain.low > 0 && gain.median >= kSmallestGainKept * baseline;
}

bool SlowerBeyondSpread(const PairedDifference& gain) { return gain.pairs > 0 && gain.high < 0; }

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
