// Where ONNX's Resize (opset 11+) reads its input along one axis: per output coordinate, for modes
// nearest and linear, under the coordinate transformations half_pixel, pytorch_half_pixel,
// align_corners and asymmetric. The arena kernel (row-major) and the layout family's kernel
// (engine/backends/onednn/resize_in_family.h) both blend from these taps.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tilebank::engine {

// One output coordinate: the two input indices it blends and the second one's weight (nearest:
// lo == hi, w 0).
struct ResizeTap {
  int64_t lo = 0, hi = 0;
  float w = 0.f;
};

// Where output coordinate `o` of an axis resized from `in` to `out` elements (`scale`, and the
// resized length ONNX divides by: not rounded when scales are given) reads in the input, under
// `transform`.
double ResizeSourceCoordinate(int64_t o, int64_t in, int64_t out, double scale, double resized_length, const std::string& transform);

// The taps of an axis resized from `in` to `out` elements; `scale` the axis's given scale (0 or
// less: none given, out / in). `mode` nearest (with `nearest_mode`) or linear.
std::vector<ResizeTap> ResizeAxisTaps(int64_t in, int64_t out, double scale, const std::string& mode, const std::string& transform,
                                      const std::string& nearest_mode);

// Whether some tap of the axis blends two distinct inputs, the second weighing something (an axis
// kept at its size under half_pixel has taps of weight 0: a copy).
bool ResizeTapsBlend(const std::vector<ResizeTap>& taps);

}  // namespace tilebank::engine
