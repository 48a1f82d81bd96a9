// GridSample's sampling positions (opset 16, 2-D): for each output position of one image, the
// input plane offsets it reads and their weights (bilinear, nearest or bicubic; zeros, border or
// reflection padding; align_corners). The same for every channel, so found once per image and
// run, and shared by the reference kernel (double) and the float32 arena one.
#pragma once
#include <cmath>
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
// An unnormalized coordinate under border or reflection padding (zeros padding leaves it as it is).
double PaddedGridCoordinate(const GridSampleGeometry& g, double v, int64_t size);

// A bilinear position's taps inside the plane (at most 4), in the order AddGridSampleTaps lists them,
// padding applied: their offsets and weights written, their count returned. A coordinate that is
// NaN or infinite reads nothing. Inline: the float32 kernel calls it for every output position.
inline int BilinearGridSampleTaps(const GridSampleGeometry& g, double sx, double sy, int64_t* offsets, double* weights) {
  if (g.padding != GridSampleGeometry::Padding::kZeros) sx = PaddedGridCoordinate(g, sx, g.W), sy = PaddedGridCoordinate(g, sy, g.H);
  const double fx = std::floor(sx), fy = std::floor(sy);
  if (!std::isfinite(fx) || !std::isfinite(fy)) return 0;
  const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  const double lx = sx - fx, ly = sy - fy;
  int count = 0;
  auto tap = [&](int64_t iy, int64_t ix, double weight) {
    if (iy < 0 || iy >= g.H || ix < 0 || ix >= g.W) return;
    offsets[count] = iy * g.W + ix, weights[count] = weight, ++count;
  };
  tap(y0, x0, (1 - ly) * (1 - lx));
  tap(y0, x0 + 1, (1 - ly) * lx);
  tap(y0 + 1, x0, ly * (1 - lx));
  tap(y0 + 1, x0 + 1, ly * lx);
  return count;
}
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
