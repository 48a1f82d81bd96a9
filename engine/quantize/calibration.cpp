#include "engine/quantize/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilebank::engine::quantize {

Histogram::Histogram(double low, double high) : low_(std::min(low, 0.0)), high_(std::max(high, 0.0)), counts_(kBins, 0.0) {
  if (high_ <= low_) high_ = low_ + 1e-6;
}

void Histogram::Add(const float* values, size_t count) {
  const double width = (high_ - low_) / kBins;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) continue;
    const int bin = std::clamp(static_cast<int>((values[i] - low_) / width), 0, kBins - 1);
    counts_[bin] += 1;
  }
}

double Histogram::Total() const {
  double total = 0;
  for (double c : counts_) total += c;
  return total;
}

bool ParseRangeMethod(const std::string& name, RangeMethod* method) {
  for (RangeMethod m : {RangeMethod::kMinMax, RangeMethod::kPercentile, RangeMethod::kEntropy, RangeMethod::kAuto})
    if (name == RangeMethodName(m)) return *method = m, true;
  return false;
}

const char* RangeMethodName(RangeMethod method) {
  switch (method) {
    case RangeMethod::kMinMax: return "minmax";
    case RangeMethod::kPercentile: return "percentile";
    case RangeMethod::kEntropy: return "entropy";
    case RangeMethod::kAuto: return "auto";
  }
  return "";
}

namespace {

// Values below the p-th lower and above the p-th upper percentile left out.
Range PercentileRange(const Histogram& h, double percentile) {
  const double total = h.Total(), tail = total * (100.0 - percentile) / 100.0;
  const auto& c = h.counts();
  double seen = 0;
  int lo = 0, hi = Histogram::kBins - 1;
  while (lo < hi && seen + c[lo] <= tail) seen += c[lo++];
  seen = 0;
  while (hi > lo && seen + c[hi] <= tail) seen += c[hi--];
  const double width = (h.high() - h.low()) / Histogram::kBins;
  return {std::min(0.0, h.low() + lo * width), std::max(0.0, h.low() + (hi + 1) * width), RangeMethod::kPercentile};
}

// KL divergence between the histogram clipped to [lo, hi) bins and its 256-level quantization.
double ClippedDivergence(const std::vector<double>& c, int lo, int hi) {
  const int bins = hi - lo;
  std::vector<double> p(c.begin() + lo, c.begin() + hi);
  for (int i = 0; i < lo; ++i) p.front() += c[i];  // the clipped tails pile onto the edges
  for (int i = hi; i < static_cast<int>(c.size()); ++i) p.back() += c[i];
  std::vector<double> q(static_cast<size_t>(bins), 0.0);
  const double per_level = static_cast<double>(bins) / 256.0;
  for (int level = 0; level < 256; ++level) {
    const int a = static_cast<int>(level * per_level), b = std::max(a + 1, static_cast<int>((level + 1) * per_level));
    double sum = 0;
    int nonzero = 0;
    for (int i = a; i < b && i < bins; ++i) sum += p[i], nonzero += p[i] > 0;
    for (int i = a; i < b && i < bins; ++i) q[i] = p[i] > 0 ? sum / nonzero : 0;
  }
  double p_total = 0, q_total = 0;
  for (int i = 0; i < bins; ++i) p_total += p[i], q_total += q[i];
  if (p_total <= 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (int i = 0; i < bins; ++i)
    if (p[i] > 0) kl += p[i] / p_total * std::log((p[i] / p_total) / std::max(q[i] / q_total, 1e-12));
  return kl;
}

// The clipping of the histogram (around zero's bin, kept inside) whose 256-level quantization
// diverges least from it.
Range EntropyRange(const Histogram& h) {
  const auto& c = h.counts();
  const double width = (h.high() - h.low()) / Histogram::kBins;
  const int zero = std::clamp(static_cast<int>(-h.low() / width), 0, Histogram::kBins - 1);
  double best = std::numeric_limits<double>::infinity();
  Range r{h.low(), h.high(), RangeMethod::kEntropy};
  // Shrink both ends by the same share of their extent from zero: 64 candidates.
  for (int step = 0; step < 64; ++step) {
    const double keep = 1.0 - step / 80.0;
    const int lo = zero - static_cast<int>(zero * keep), hi = zero + 1 + static_cast<int>((Histogram::kBins - 1 - zero) * keep);
    if (hi - lo < 256) break;
    const double kl = ClippedDivergence(c, lo, hi);
    if (kl < best) best = kl, r.low = std::min(0.0, h.low() + lo * width), r.high = std::max(0.0, h.low() + hi * width);
  }
  return r;
}

}  // namespace

double QuantizationError(const Histogram& h, const Range& r) {
  const double scale = (r.high - r.low) / 255.0;
  if (scale <= 0) return 0;
  const double zero = std::nearbyint(-r.low / scale);
  double error = 0, total = 0;
  for (int i = 0; i < Histogram::kBins; ++i) {
    if (h.counts()[i] <= 0) continue;
    const double x = h.BinCenter(i), q = std::clamp(std::nearbyint(x / scale) + zero, 0.0, 255.0);
    const double d = x - (q - zero) * scale;
    error += h.counts()[i] * d * d;
    total += h.counts()[i];
  }
  return total > 0 ? error / total : 0;
}

Range ChooseRange(const Histogram& h, RangeMethod method, double percentile) {
  const Range minmax{std::min(0.0, h.low()), std::max(0.0, h.high()), RangeMethod::kMinMax};
  switch (method) {
    case RangeMethod::kMinMax: return minmax;
    case RangeMethod::kPercentile: return PercentileRange(h, percentile);
    case RangeMethod::kEntropy: return EntropyRange(h);
    case RangeMethod::kAuto: break;
  }
  Range best = minmax;
  double best_error = QuantizationError(h, minmax);
  for (const Range& r : {PercentileRange(h, percentile), EntropyRange(h)}) {
    const double e = QuantizationError(h, r);
    if (e < best_error) best_error = e, best = r;
  }
  return best;
}

}  // namespace tilebank::engine::quantize
