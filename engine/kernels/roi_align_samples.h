// RoiAlign's sampling (ONNX RoiAlign-10/16), shared by its reference and arena kernels: roi
// [x1, y1, x2, y2] scaled by spatial_scale (less half a pixel in half_pixel mode), split into
// output_height x output_width bins, each sampled on a grid of sampling_ratio^2 points (or as many as
// the bin spans), each point bilinear over four neighbours.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tilebank::engine::kernels {

struct RoiAlignShape {
  int64_t H = 0, W = 0, ph_n = 1, pw_n = 1, sampling = 0;
  double scale = 1.0;
  bool half_pixel = true;
};

// One sample: four offsets in the plane and their weights; none when it falls outside the map.
struct RoiSample {
  bool inside = false;
  int64_t at[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// The samples of `roi`, bin after bin (row-major over the bins), every bin `*per_bin` of them.
inline void RoiAlignSamples(const RoiAlignShape& s, const double roi[4], std::vector<RoiSample>* samples, int64_t* per_bin) {
  const double offset = s.half_pixel ? 0.5 : 0.0;
  const double x1 = roi[0] * s.scale - offset, y1 = roi[1] * s.scale - offset;
  double roi_w = roi[2] * s.scale - offset - x1, roi_h = roi[3] * s.scale - offset - y1;
  if (!s.half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
  const double bin_h = roi_h / s.ph_n, bin_w = roi_w / s.pw_n;
  const int64_t grid_h = s.sampling > 0 ? s.sampling : static_cast<int64_t>(std::ceil(roi_h / s.ph_n)),
                grid_w = s.sampling > 0 ? s.sampling : static_cast<int64_t>(std::ceil(roi_w / s.pw_n));
  *per_bin = std::max<int64_t>(grid_h, 0) * std::max<int64_t>(grid_w, 0);
  samples->clear();
  for (int64_t ph = 0; ph < s.ph_n; ++ph)
    for (int64_t pw = 0; pw < s.pw_n; ++pw)
      for (int64_t iy = 0; iy < grid_h; ++iy)
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          double sy = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h, sx = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w;
          RoiSample p;
          if (!(sy < -1.0 || sy > s.H || sx < -1.0 || sx > s.W)) {
            sy = std::max(sy, 0.0), sx = std::max(sx, 0.0);
            int64_t y_lo = static_cast<int64_t>(sy), x_lo = static_cast<int64_t>(sx), y_hi = y_lo + 1, x_hi = x_lo + 1;
            if (y_lo >= s.H - 1) y_hi = y_lo = s.H - 1, sy = static_cast<double>(y_lo);
            if (x_lo >= s.W - 1) x_hi = x_lo = s.W - 1, sx = static_cast<double>(x_lo);
            const double ly = sy - y_lo, lx = sx - x_lo, hy = 1 - ly, hx = 1 - lx;
            p = RoiSample{true, {y_lo * s.W + x_lo, y_lo * s.W + x_hi, y_hi * s.W + x_lo, y_hi * s.W + x_hi}, {hy * hx, hy * lx, ly * hx, ly * lx}};
          }
          samples->push_back(p);
        }
}

}  // namespace tilebank::engine::kernels
