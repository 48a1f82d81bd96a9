#include "engine/backends/onednn/planar_pool.h"

#include <algorithm>
#include <vector>

#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {
constexpr int64_t kPlanarPoolGrain = 4096;  // floats of output a thread writes at least
}  // namespace

void PlanarPool::Run(const float* in, float* out) const {
  const PoolAxis &d = window_.axes[0], &h = window_.axes[1], &w = window_.axes[2];
  const int64_t tasks = planes_ * d.out * h.out;  // one output line (all of W) each
  ParallelFor(tasks, std::max<int64_t>(1, kPlanarPoolGrain / std::max<int64_t>(1, w.out)), [&](int64_t begin, int64_t end) {
    std::vector<const float*> lines;
    std::vector<float> scratch(static_cast<size_t>(w.in));
    PoolPlane line;
    line.w = w, line.pad_divisor = window_.pad_divisor(), line.scratch = scratch.data();
    for (int64_t t = begin; t < end; ++t) {
      const int64_t oh = t % h.out, od = t / h.out % d.out, plane = t / (h.out * d.out);
      const float* src = in + plane * d.in * h.in * w.in;
      lines.clear();
      for (int64_t id = d.First(od); id < d.End(od); ++id)
        for (int64_t ih = h.First(oh); ih < h.End(oh); ++ih) lines.push_back(src + (id * h.in + ih) * w.in);
      line.lines = lines.data(), line.line_count = static_cast<int64_t>(lines.size());
      PoolPlaneLine(window_.max, line, out + t * w.out);
    }
  });
}

}  // namespace tilebank::engine
