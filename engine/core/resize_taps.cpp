#include "engine/core/resize_taps.h"

#include <algorithm>
#include <cmath>

namespace tilebank::engine {

double ResizeSourceCoordinate(int64_t o, int64_t in, int64_t out, double scale, double resized_length, const std::string& transform) {
  if (transform == "align_corners") return resized_length > 1 ? o * double(in - 1) / (resized_length - 1) : 0;
  if (transform == "asymmetric") return o / scale;
  if (transform == "pytorch_half_pixel" && out == 1) return 0;
  return (o + 0.5) / scale - 0.5;
}

std::vector<ResizeTap> ResizeAxisTaps(int64_t in, int64_t out, double scale, const std::string& mode, const std::string& transform,
                                      const std::string& nearest_mode) {
  const bool scaled = scale > 0;
  if (!scaled) scale = static_cast<double>(out) / in;
  const double resized_length = scaled ? in * scale : static_cast<double>(out);  // ONNX: not rounded when scales are given
  std::vector<ResizeTap> taps;
  taps.reserve(static_cast<size_t>(std::max<int64_t>(out, 0)));
  for (int64_t o = 0; o < out; ++o) {
    double x = ResizeSourceCoordinate(o, in, out, scale, resized_length, transform);
    if (mode == "nearest") {
      int64_t k;
      if (nearest_mode == "floor") k = static_cast<int64_t>(std::floor(x));
      else if (nearest_mode == "ceil") k = static_cast<int64_t>(std::ceil(x));
      else if (nearest_mode == "round_prefer_ceil") k = static_cast<int64_t>(std::floor(x + 0.5));
      else k = static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
      k = std::clamp<int64_t>(k, 0, in - 1);
      taps.push_back({k, k, 0.f});
    } else {
      x = std::clamp(x, 0.0, static_cast<double>(in - 1));
      const int64_t lo = static_cast<int64_t>(std::floor(x));
      const int64_t hi = std::min(lo + 1, in - 1);
      taps.push_back({lo, hi, static_cast<float>(x - lo)});
    }
  }
  return taps;
}

bool ResizeTapsBlend(const std::vector<ResizeTap>& taps) {
  return std::any_of(taps.begin(), taps.end(), [](const ResizeTap& t) { return t.hi != t.lo && t.w != 0.f; });
}

}  // namespace tilebank::engine
