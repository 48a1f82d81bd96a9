// How every repeated measurement in tilebank is summed up (a kernel's samples in the runner, a
// whole model's runs, each node's time in them): the median and the interquartile spread, both
// from linearly interpolated quantiles of the sorted samples (the median of an even count is the
// mean of the middle two).
#pragma once
#include <functional>
#include <vector>

namespace tilebank::engine {

struct SampleSummary {
  double median = 0, spread = 0;  // spread: the 75th minus the 25th percentile; 0 for no samples
  double lower_quartile = 0, upper_quartile = 0;  // the 25th and 75th percentiles
};

SampleSummary Summarize(std::vector<double> samples);

// How much less b took than a, measured in pairs (a[i] and b[i] ran side by side, in one round of
// interleaved runs, so that the machine's drift falls on both): the median of a[i] - b[i] and a
// distribution-free confidence interval of at least 95% for it, the sign test's order statistics
// (with fewer than 6 pairs, where none reaches 95%, the smallest and largest difference). Samples
// past the shorter one's length are not paired. Zero pairs: all zero.
struct PairedDifference {
  double median = 0, low = 0, high = 0;
  int pairs = 0;
};
PairedDifference PairedDifferenceOf(const std::vector<double>& a, const std::vector<double>& b);

// The smallest gain a tuning job keeps: a measured gain under 1% of the time it saves from is not
// worth an entry that another day's noise can turn around.
inline constexpr double kSmallestGainKept = 0.01;
// b faster than a beyond the spread: the whole interval above zero, and the median gain at least
// kSmallestGainKept of `baseline` (a's time). The only verdict under which a tuned choice is kept.
bool FasterBeyondSpread(const PairedDifference& gain, double baseline);
// b slower than a beyond the spread: the whole interval below zero.
bool SlowerBeyondSpread(const PairedDifference& gain);

// A quick choice between two ways at bind time: the fastest of `runs` calls of `run` in seconds,
// the first `warmup` of them untimed; 1e30 as soon as a call returns false (it failed).
double FastestOf(int runs, int warmup, const std::function<bool()>& run);

// A choice among ways, each `run` timed by FastestOf(runs, warmup) in turn, for `rounds` rounds:
// each way's fastest over the rounds. Timed one after the other, the first way paid for a cold start
// (after a load's serial phases OpenMP's second thread sleeps, and its first regions wait for it).
std::vector<double> FastestOfAlternated(int rounds, int runs, int warmup, const std::vector<std::function<bool()>>& ways);

}  // namespace tilebank::engine
