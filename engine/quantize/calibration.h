// Activation ranges for static quantization: each calibrated tensor's values over the calibration
// inputs as a histogram, and the range an 8-bit quantization of it should cover, by min/max, by a
// percentile, by entropy (the clipping whose quantized histogram keeps the most information, as
// TensorRT's calibrator does), or the one of them whose quantization error on the histogram is
// smallest (auto: chosen per tensor).
#pragma once
#include <string>
#include <vector>

namespace tilebank::engine::quantize {

class Histogram {
 public:
  static constexpr int kBins = 2048;
  // Over [low, high], which must hold every value added (the first pass's min and max).
  Histogram(double low, double high);
  void Add(const float* values, size_t count);
  double low() const { return low_; }
  double high() const { return high_; }
  const std::vector<double>& counts() const { return counts_; }
  double BinCenter(int i) const { return low_ + (i + 0.5) * (high_ - low_) / kBins; }
  double Total() const;

 private:
  double low_, high_;
  std::vector<double> counts_;
};

enum class RangeMethod { kMinMax, kPercentile, kEntropy, kAuto };
// "minmax", "percentile", "entropy", "auto"; false for another name.
bool ParseRangeMethod(const std::string& name, RangeMethod* method);
const char* RangeMethodName(RangeMethod method);

struct Range {
  double low = 0, high = 0;  // low <= 0 <= high: zero is exact
  RangeMethod method = RangeMethod::kMinMax;
};

// The range of a uint8 asymmetric quantization of the values `h` holds.
Range ChooseRange(const Histogram& h, RangeMethod method, double percentile = 99.999);

// Mean squared error of quantizing the histogram's values to 256 levels over `r`.
double QuantizationError(const Histogram& h, const Range& r);

}  // namespace tilebank::engine::quantize
