// How every repeated measurement in tilebank is summed up (a kernel's samples in the runner, a
// whole model's runs, each node's time in them): the median and the interquartile spread, both
// from linearly interpolated quantiles of the sorted samples (the median of an even count is the
// mean of the middle two).
#pragma once
#include <vector>

namespace tilebank::engine {

struct SampleSummary {
  double median = 0, spread = 0;  // spread: the 75th minus the 25th percentile; 0 for no samples
  double lower_quartile = 0, upper_quartile = 0;  // the 25th and 75th percentiles
};

SampleSummary Summarize(std::vector<double> samples);

}  // namespace tilebank::engine
