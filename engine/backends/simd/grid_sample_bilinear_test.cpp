// Bilinear GridSample in SIMD against the taps the reference finds in double
// (engine/kernels/grid_sample_taps.h), on every target this CPU runs: zeros and border padding, with
// and without align_corners, odd plane sizes, position counts around a vector, coordinates outside
// [-1, 1], NaN and infinite ones (which sample 0), and an infinite input value where taps outside
// read (which must not leak in as 0 times infinity).
#include "engine/backends/simd/grid_sample_bilinear.h"

#include <doctest/doctest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/kernels/grid_sample_taps.h"

namespace tilebank::engine {
namespace {

using kernels::GridSampleGeometry;

TEST_CASE("bilinear GridSample in SIMD: zeros and border padding, corners aligned or not, coordinates outside and not finite") {
  const float kInf = std::numeric_limits<float>::infinity(), kNaN = std::numeric_limits<float>::quiet_NaN();
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    for (bool border : {false, true})
      for (bool align_corners : {false, true})
        for (int64_t positions : {1, 7, 16, 37}) {
          CAPTURE(border);
          CAPTURE(align_corners);
          CAPTURE(positions);
          GridSampleBilinearShape s;
          s.channels = 3, s.h = 5, s.w = 7, s.positions = positions, s.align_corners = align_corners, s.border = border;
          std::vector<float> image(static_cast<size_t>(s.channels * s.h * s.w));
          for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
          image[0] = kInf;  // channel 0's first value: what a tap outside reads, weighted 0
          std::vector<float> grid(static_cast<size_t>(2 * positions));
          for (size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>(1.3 * std::sin(1.9 * static_cast<double>(i) + 0.4));
          if (positions > 3) grid[2] = kNaN, grid[5] = kInf, grid[6] = -kInf;
          GridSampleGeometry g;
          g.H = s.h, g.W = s.w, g.Ho = 1, g.Wo = positions, g.align_corners = align_corners;
          g.padding = border ? GridSampleGeometry::Padding::kBorder : GridSampleGeometry::Padding::kZeros;
          kernels::GridSampleTaps taps;
          kernels::FindGridSampleTaps(g, [&](int64_t i) { return static_cast<double>(grid[static_cast<size_t>(i)]); }, &taps);
          std::vector<float> y(static_cast<size_t>(s.channels * positions), -7.f);
          // In two calls, the second starting inside a vector.
          GridSampleBilinearPositions(s, image.data(), grid.data(), y.data(), 0, positions / 2);
          GridSampleBilinearPositions(s, image.data(), grid.data(), y.data(), positions / 2, positions);
          for (int64_t c = 0; c < s.channels; ++c)
            for (int64_t p = 0; p < positions; ++p) {
              double want = 0;
              for (int64_t t = taps.first[p]; t < taps.first[p + 1]; ++t) want += image[static_cast<size_t>(c * s.h * s.w + taps.offsets[t])] * taps.weights[t];
              const float got = y[static_cast<size_t>(c * positions + p)];
              CAPTURE(c);
              CAPTURE(p);
              if (std::isinf(want)) {
                CHECK(got == want);
              } else {
                CHECK(std::abs(got - want) < 1e-5);
              }
            }
        }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace tilebank::engine
