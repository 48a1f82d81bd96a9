#include "engine/backends/onednn/planar_pool.h"

#include <algorithm>
#include <vector>

#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {
constexpr int64_t kPlanarPoolGrain = 4096;  // floats of output a thread writes at least
}  // namespace

PlanarPool::PlanarPool(OwnPoolWindow window, int64_t planes) : window_(window), planes_(planes) {
  const PoolAxis &d = window_.axes[0], &h = window_.axes[1], &w = window_.axes[2];
  same_planes_ = d.in == 1 && d.out == 1 && d.kernel == 1 && TakesSamePlane(h, w);
  if (!same_planes_ || window_.max) return;
  reciprocal_.resize(static_cast<size_t>(h.out * w.out));
  const int64_t pad_divisor = window_.pad_divisor();
  for (int64_t o = 0; o < h.out; ++o)
    for (int64_t q = 0; q < w.out; ++q) {
      const int64_t divisor = pad_divisor ? pad_divisor : (h.End(o) - h.First(o)) * (w.End(q) - w.First(q));
      reciprocal_[o * w.out + q] = 1.f / static_cast<float>(divisor);
    }
}

void PlanarPool::Run(const float* in, float* out) const { same_planes_ ? RunSamePlanes(in, out) : RunLines(in, out); }

void PlanarPool::RunSamePlanes(const float* in, float* out) const {
  const PoolAxis &h = window_.axes[1], &w = window_.axes[2];
  const int64_t plane = h.in * w.in;
  ParallelFor(planes_, std::max<int64_t>(1, kPlanarPoolGrain / plane), [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(plane));
    SamePlane p{h, w, window_.max ? nullptr : reciprocal_.data(), scratch.data()};
    for (int64_t i = begin; i < end; ++i) PoolSamePlane(window_.max, p, in + i * plane, out + i * plane);
  });
}

void PlanarPool::RunLines(const float* in, float* out) const {
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
