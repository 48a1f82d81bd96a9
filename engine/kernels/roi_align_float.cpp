#include "engine/kernels/roi_align_float.h"

#include <algorithm>
#include <vector>

#include "engine/core/parallel_for.h"

namespace tilebank::engine::kernels {

void RoiAlignFloat(const RoiAlignShape& shape, bool use_max, const RoiAlignFloatInput& in, float* out, RunFault* fault) {
  const int64_t bins = shape.ph_n * shape.pw_n, C = in.C, plane_size = shape.H * shape.W;
  ParallelFor(in.R, 1, [&](int64_t begin, int64_t end) {
    std::vector<RoiSample> samples;
    std::vector<float> weights;  // samples' weights in float32, four each
    int64_t per_bin = 0;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t batch = in.wide ? static_cast<const int64_t*>(in.batches)[r] : static_cast<const int32_t*>(in.batches)[r];
      if (batch < 0 || batch >= in.N) {
        fault->Record(batch);
        std::fill(out + r * C * bins, out + (r + 1) * C * bins, 0.f);
        continue;
      }
      const double roi[4] = {in.rois[r * 4], in.rois[r * 4 + 1], in.rois[r * 4 + 2], in.rois[r * 4 + 3]};
      RoiAlignSamples(shape, roi, &samples, &per_bin);
      weights.resize(samples.size() * 4);
      for (size_t k = 0; k < samples.size(); ++k)
        for (int t = 0; t < 4; ++t) weights[k * 4 + t] = static_cast<float>(samples[k].w[t]);
      const float count = static_cast<float>(std::max<int64_t>(per_bin, 1));
      for (int64_t c = 0; c < C; ++c) {
        const float* plane = in.x + (batch * C + c) * plane_size;
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
}

}  // namespace tilebank::engine::kernels
