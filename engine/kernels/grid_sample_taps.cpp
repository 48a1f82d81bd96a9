#include "engine/kernels/grid_sample_taps.h"

#include <algorithm>
#include <cmath>

namespace tilebank::engine::kernels {
namespace {

// A coordinate folded back into [low, high] / 2 by reflection (twice_low, twice_high doubled bounds).
double Reflect(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::abs(v - low);
  const double extra = std::fmod(v, span);
  return static_cast<int64_t>(std::floor(v / span)) % 2 == 0 ? extra + low : span - extra + low;
}

}  // namespace

double PaddedGridCoordinate(const GridSampleGeometry& g, double v, int64_t size) {
  if (g.padding == GridSampleGeometry::Padding::kBorder) return std::clamp(v, 0.0, static_cast<double>(size - 1));
  if (g.padding == GridSampleGeometry::Padding::kReflection) {
    v = g.align_corners ? Reflect(v, 0, 2.0 * (size - 1)) : Reflect(v, -1, 2.0 * size - 1);
    return std::clamp(v, 0.0, static_cast<double>(size - 1));
  }
  return v;
}

bool MakeGridSampleGeometry(const std::vector<int64_t>& x, const std::vector<int64_t>& grid, const std::string& mode,
                            const std::string& padding, bool align_corners, GridSampleGeometry* g) {
  using Mode = GridSampleGeometry::Mode;
  using Padding = GridSampleGeometry::Padding;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") return false;
  if (padding != "zeros" && padding != "border" && padding != "reflection") return false;
  g->H = x[2], g->W = x[3], g->Ho = grid[1], g->Wo = grid[2];
  g->mode = mode == "nearest" ? Mode::kNearest : mode == "bicubic" ? Mode::kBicubic : Mode::kBilinear;
  g->padding = padding == "border" ? Padding::kBorder : padding == "reflection" ? Padding::kReflection : Padding::kZeros;
  g->align_corners = align_corners;
  return true;
}

double UnnormalizedGridCoordinate(const GridSampleGeometry& g, double v, int64_t size) {
  return g.align_corners ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
}

void AddGridSampleTaps(const GridSampleGeometry& g, double sx, double sy, GridSampleTaps* taps) {
  auto tap = [&](int64_t iy, int64_t ix, double weight) {
    if (iy < 0 || iy >= g.H || ix < 0 || ix >= g.W) return;
    taps->offsets.push_back(iy * g.W + ix);
    taps->weights.push_back(weight);
  };
  if (g.mode == GridSampleGeometry::Mode::kNearest) {
    tap(static_cast<int64_t>(std::nearbyint(PaddedGridCoordinate(g, sy, g.H))), static_cast<int64_t>(std::nearbyint(PaddedGridCoordinate(g, sx, g.W))), 1.0);
  } else if (g.mode == GridSampleGeometry::Mode::kBicubic) {
    const double fx = std::floor(sx), fy = std::floor(sy), A = -0.75;
    auto coeffs = [A](double t, double* c) {
      auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
      auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
      c[0] = far(t + 1), c[1] = near(t), c[2] = near(1 - t), c[3] = far(2 - t);
    };
    double cx[4], cy[4];
    coeffs(sx - fx, cx);
    coeffs(sy - fy, cy);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        tap(static_cast<int64_t>(PaddedGridCoordinate(g, fy - 1 + i, g.H)), static_cast<int64_t>(PaddedGridCoordinate(g, fx - 1 + j, g.W)), cy[i] * cx[j]);
  } else {
    int64_t offsets[4];
    double weights[4];
    for (int k = 0, n = BilinearGridSampleTaps(g, sx, sy, offsets, weights); k < n; ++k) {
      taps->offsets.push_back(offsets[k]);
      taps->weights.push_back(weights[k]);
    }
  }
}

}  // namespace tilebank::engine::kernels
