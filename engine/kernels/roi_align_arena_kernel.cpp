// RoiAlign on the float32 arena: X [N, C, H, W] and rois [R, 4] in the arena, batch_indices [R]
// (int64 or int32) read as their own elements. Each roi's bilinear samples (four taps and weights
// per sample, sampling_ratio^2 per bin, or as many as the bin spans) are found once, in double as
// the reference finds them, then every channel of its image sums (or takes the max of) them, the
// rois' channels on the threads. A batch index outside X is the run's error (ArenaFunction::verdict).
#include <algorithm>
#include <cmath>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/parallel_for.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/roi_align_samples.h"

namespace tilebank::engine::kernels {
namespace {

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
  const RoiAlignShape shape{H, W, ph_n, pw_n, sampling, scale, half_pixel};
  auto fault = std::make_shared<RunFault>();
  ArenaFunction f;
  f.runs_on_any_thread = true;
  f.run = [=](const std::vector<const float*>& in, float* out) {
    fault->Clear();
    const float* x = in[0];
    const float* rois = in[1];
    const void* batches = in[2];
    const int64_t bins = ph_n * pw_n;
    ParallelFor(R, 1, [&](int64_t begin, int64_t end) {
      std::vector<RoiSample> samples;
      std::vector<float> weights;  // samples' weights in float32, four each
      int64_t per_bin = 0;
      for (int64_t r = begin; r < end; ++r) {
        const int64_t batch = wide ? static_cast<const int64_t*>(batches)[r] : static_cast<const int32_t*>(batches)[r];
        if (batch < 0 || batch >= N) {
          fault->Record(batch);
          std::fill(out + r * C * bins, out + (r + 1) * C * bins, 0.f);
          continue;
        }
        const double roi[4] = {rois[r * 4], rois[r * 4 + 1], rois[r * 4 + 2], rois[r * 4 + 3]};
        RoiAlignSamples(shape, roi, &samples, &per_bin);
        weights.resize(samples.size() * 4);
        for (size_t k = 0; k < samples.size(); ++k)
          for (int t = 0; t < 4; ++t) weights[k * 4 + t] = static_cast<float>(samples[k].w[t]);
        const float count = static_cast<float>(std::max<int64_t>(per_bin, 1));
        for (int64_t c = 0; c < C; ++c) {
          const float* plane = x + (batch * C + c) * H * W;
          float* y = out + (r * C + c) * bins;
          for (int64_t b = 0; b < bins; ++b) {
            float acc = 0.f;
            for (int64_t k = b * per_bin; k < (b + 1) * per_bin; ++k) {
              const RoiSample& s = samples[k];
              const float* w = weights.data() + k * 4;
              float v[4] = {0.f, 0.f, 0.f, 0.f};
              if (s.inside)
                for (int t = 0; t < 4; ++t) v[t] = w[t] * plane[s.at[t]];
              if (use_max) {
                const float m = std::max({v[0], v[1], v[2], v[3]});
                acc = k == b * per_bin ? m : std::max(acc, m);
              } else {
                acc += v[0] + v[1] + v[2] + v[3];
              }
            }
            y[b] = use_max ? acc : acc / count;
          }
        }
      }
    });
  };
  f.verdict = RunFault::Verdict(fault, info, "batch index", "X's batch", N);
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
