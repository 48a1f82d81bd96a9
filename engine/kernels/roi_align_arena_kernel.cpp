// RoiAlign on the float32 arena: X [N, C, H, W] and rois [R, 4] in the arena, batch_indices [R]
// (int64 or int32) read as their own elements. Each roi's bilinear samples (four taps and weights
// per sample, sampling_ratio^2 per bin, or as many as the bin spans) are found once, in double as
// the reference finds them, then every channel of its image sums (or takes the max of) them, the
// rois' channels on the threads. A batch index outside X is the run's error (ArenaFunction::verdict).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/parallel_for.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

struct Sample {
  int64_t at[4];  // offsets in the plane
  float w[4];     // 0 for a sample outside the map
};

Result<std::unique_ptr<OpKernel>> RoiAlign(const KernelInfo& info) {
  const std::vector<int64_t>& x_shape = *info.InputShape(0);
  const std::vector<int64_t>& rois_shape = *info.InputShape(1);
  if (x_shape.size() != 4 || rois_shape.size() != 2 || rois_shape[1] != 4) return info.Bad("takes X [N, C, H, W], rois [R, 4] and batch_indices [R]");
  const int64_t N = x_shape[0], C = x_shape[1], H = x_shape[2], W = x_shape[3], R = rois_shape[0];
  const int64_t ph_n = info.attrs.Int("output_height", 1), pw_n = info.attrs.Int("output_width", 1), sampling = info.attrs.Int("sampling_ratio", 0);
  if (ph_n < 1 || pw_n < 1) return info.Bad("output_height and output_width must be positive");
  const double scale = info.attrs.Float("spatial_scale", 1.0f);
  const bool half_pixel = info.attrs.String("coordinate_transformation_mode", info.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  const bool use_max = info.attrs.String("mode", "avg") == "max";
  const bool wide = info.InputType(2) == DType::kInt64;
  auto bad = std::make_shared<std::atomic<int64_t>>(0);
  auto found = std::make_shared<std::atomic<bool>>(false);
  ArenaFunction f;
  f.runs_on_any_thread = true;
  f.run = [=](const std::vector<const float*>& in, float* out) {
    found->store(false);
    const float* x = in[0];
    const float* rois = in[1];
    const void* batches = in[2];
    const int64_t bins = ph_n * pw_n;
    ParallelFor(R, 1, [&](int64_t begin, int64_t end) {
      std::vector<Sample> samples;
      std::vector<int64_t> first(static_cast<size_t>(bins + 1));  // bin b's samples: [first[b], first[b + 1])
      for (int64_t r = begin; r < end; ++r) {
        const int64_t batch = wide ? static_cast<const int64_t*>(batches)[r] : static_cast<const int32_t*>(batches)[r];
        if (batch < 0 || batch >= N) {
          if (!found->exchange(true)) bad->store(batch);
          std::fill(out + r * C * bins, out + (r + 1) * C * bins, 0.f);
          continue;
        }
        const double offset = half_pixel ? 0.5 : 0.0;
        const double x1 = rois[r * 4] * scale - offset, y1 = rois[r * 4 + 1] * scale - offset;
        double roi_w = rois[r * 4 + 2] * scale - offset - x1, roi_h = rois[r * 4 + 3] * scale - offset - y1;
        if (!half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
        const double bin_h = roi_h / ph_n, bin_w = roi_w / pw_n;
        const int64_t grid_h = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roi_h / ph_n)),
                      grid_w = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roi_w / pw_n));
        samples.clear();
        for (int64_t ph = 0; ph < ph_n; ++ph)
          for (int64_t pw = 0; pw < pw_n; ++pw) {
            first[ph * pw_n + pw] = static_cast<int64_t>(samples.size());
            for (int64_t iy = 0; iy < grid_h; ++iy)
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                double sy = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h, sx = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w;
                Sample s{{0, 0, 0, 0}, {0.f, 0.f, 0.f, 0.f}};
                if (!(sy < -1.0 || sy > H || sx < -1.0 || sx > W)) {
                  sy = std::max(sy, 0.0), sx = std::max(sx, 0.0);
                  int64_t y_lo = static_cast<int64_t>(sy), x_lo = static_cast<int64_t>(sx), y_hi = y_lo + 1, x_hi = x_lo + 1;
                  if (y_lo >= H - 1) y_hi = y_lo = H - 1, sy = static_cast<double>(y_lo);
                  if (x_lo >= W - 1) x_hi = x_lo = W - 1, sx = static_cast<double>(x_lo);
                  const double ly = sy - y_lo, lx = sx - x_lo, hy = 1 - ly, hx = 1 - lx;
                  s = Sample{{y_lo * W + x_lo, y_lo * W + x_hi, y_hi * W + x_lo, y_hi * W + x_hi},
                             {static_cast<float>(hy * hx), static_cast<float>(hy * lx), static_cast<float>(ly * hx), static_cast<float>(ly * lx)}};
                }
                samples.push_back(s);
              }
          }
        first[bins] = static_cast<int64_t>(samples.size());
        const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
        for (int64_t c = 0; c < C; ++c) {
          const float* plane = x + (batch * C + c) * H * W;
          float* y = out + (r * C + c) * bins;
          for (int64_t b = 0; b < bins; ++b) {
            float acc = 0.f;
            for (int64_t k = first[b]; k < first[b + 1]; ++k) {
              const Sample& s = samples[k];
              const float v0 = s.w[0] * plane[s.at[0]], v1 = s.w[1] * plane[s.at[1]], v2 = s.w[2] * plane[s.at[2]], v3 = s.w[3] * plane[s.at[3]];
              if (use_max) {
                const float m = std::max({v0, v1, v2, v3});
                acc = k == first[b] ? m : std::max(acc, m);
              } else {
                acc += v0 + v1 + v2 + v3;
              }
            }
            y[b] = use_max ? acc : acc / count;
          }
        }
      }
    });
  };
  f.verdict = [info, found, bad, N]() -> Status {
    if (!found->load()) return Status::Ok();
    return info.Bad("batch index " + std::to_string(bad->load()) + " is outside X's batch of " + std::to_string(N));
  };
  return ArenaKernel(info, std::move(f));
}

// Static shapes; X and rois float32, batch_indices int64 or int32.
bool StaticRoiAlign(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 3) return false;
  return info.InputType(0) == DType::kFloat32 && info.InputType(1) == DType::kFloat32 &&
         (info.InputType(2) == DType::kInt64 || info.InputType(2) == DType::kInt32) && info.InputShape(0) && info.InputShape(1) && info.InputShape(2);
}

}  // namespace

void RegisterRoiAlignArenaKernel(KernelRegistry* r) {
  r->Add({"RoiAlign", 10, INT_MAX, {DType::kFloat32}, 0, RoiAlign, false, "float32", StaticRoiAlign});
}

}  // namespace tilebank::engine::kernels
