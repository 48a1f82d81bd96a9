// GridSample's bilinear sampling (opset 16, 2-D; zeros or border padding) written with Highway for the
// running CPU's SIMD: a vector of output positions at a time, their coordinates, taps and weights
// found in registers and each channel's four taps gathered, where the scalar loop found each
// position's taps in double through a call per coordinate (a spatial transformer's 4 x 3 x 128 x 128
// sampling: 0.68 ms on two threads).
#pragma once
#include <cstdint>

namespace tilebank::engine {

struct GridSampleBilinearShape {
  int64_t channels = 0, h = 0, w = 0;  // one image: [channels][h][w], h * w below 2^31
  int64_t positions = 0;               // its output positions: [channels][positions], grid [positions][2] (x, y in [-1, 1])
  bool align_corners = false;
  bool border = false;  // padding "border" (coordinates clamped into the plane); else "zeros" (taps outside read 0)
};

// Output positions [begin, end) of one image: `image` its planes, `grid` its grid, `y` its output.
// A non-finite coordinate samples 0, as ONNX Runtime's and the reference do.
void GridSampleBilinearPositions(const GridSampleBilinearShape& s, const float* image, const float* grid, float* y, int64_t begin, int64_t end);

}  // namespace tilebank::engine
