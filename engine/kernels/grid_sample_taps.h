// GridSample's sampling positions (opset 16, 2-D): for each output position of one image, the
// input plane offsets it reads and their weights (bilinear, nearest or bicubic; zeros, border or
// reflection padding; align_corners). The same for every channel, so found once per image and
// run, and shared by the reference kernel (double) and the float32 arena one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tilebank::engine::kernels {

struct GridSampleGeometry {
  enum class Mode { kBilinear, kNearest, kBicubic };
  enum class Padding { kZeros, kBorder, kReflection };
  int64_t H = 0, W = 0, Ho = 0, Wo = 0;  // the input plane and the output positions
  Mode mode = Mode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// The geometry of X [N, C, H, W] and grid [N, Ho, Wo, 2] under the node's attributes; false when
// mode or padding_mode names none ONNX defines.
bool MakeGridSampleGeometry(const std::vector<int64_t>& x, const std::vector<int64_t>& grid, const std::string& mode,
                            const std::string& padding, bool align_corners, GridSampleGeometry* g);

// Output position p reads offsets[t] with weights[t] for t in [first[p], first[p + 1]); taps outside
// the plane (zeros padding) are left out.
struct GridSampleTaps {
  std::vector<int64_t> first, offsets;
  std::vector<double> weights;
};

// The taps of one image from its grid: Ho * Wo pairs (x, y) in [-1, 1], read as doubles by `at(i)`.
template <class GridAt>
void FindGridSampleTaps(const GridSampleGeometry& g, const GridAt& at, GridSampleTaps* taps);

// One position's taps from its unnormalized coordinates, appended to `taps`.
void AddGridSampleTaps(const GridSampleGeometry& g, double sx, double sy, GridSampleTaps* taps);
double UnnormalizedGridCoordinate(const GridSampleGeometry& g, double v, int64_t size);

template <class GridAt>
void FindGridSampleTaps(const GridSampleGeometry& g, const GridAt& at, GridSampleTaps* taps) {
  const int64_t positions = g.Ho * g.Wo;
  taps->first.resize(static_cast<size_t>(positions) + 1);
  taps->offsets.clear();
  taps->weights.clear();
  for (int64_t p = 0; p < positions; ++p) {
    taps->first[p] = static_cast<int64_t>(taps->offsets.size());
    AddGridSampleTaps(g, UnnormalizedGridCoordinate(g, at(2 * p), g.W), UnnormalizedGridCoordinate(g, at(2 * p + 1), g.H), taps);
  }
  taps->first[positions] = static_cast<int64_t>(taps->offsets.size());
}

}  // namespace tilebank::engine::kernels
