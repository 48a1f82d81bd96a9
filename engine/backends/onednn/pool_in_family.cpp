#include "engine/backends/onednn/pool_in_family.h"

#include <algorithm>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/onednn/own_pool_window.h"
#include "engine/backends/simd/window_pool.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats of output a thread writes at least.
constexpr int64_t kPoolGrain = 4096;

class PoolFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  PoolFamilyKernel(OwnPoolWindow window, ChannelRows in, ChannelRows out) : window_(window), in_(in), out_(out) {}

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const PoolAxis &d = window_.axes[0], &h = window_.axes[1], &w = window_.axes[2];
    const int64_t blocks = in_.block ? in_.padded / in_.block : 1, width = in_.width;
    const int64_t tasks = in_.images * blocks * d.out * h.out;  // one output line (all of W) each
    ParallelFor(tasks, std::max<int64_t>(1, kPoolGrain / std::max<int64_t>(1, w.out * width)), [&](int64_t begin, int64_t end) {
      std::vector<const float*> lines;
      PoolLine line;
      line.w = w, line.width = width;
      line.pad_divisor = window_.pad_divisor();
      for (int64_t t = begin; t < end; ++t) {
        const int64_t oh = t % h.out, od = t / h.out % d.out, block = t / (h.out * d.out) % blocks, image = t / (h.out * d.out * blocks);
        const float* src = in[0] + image * in_.image_size() + block * in_.spatial * width;
        float* dst = out + image * out_.image_size() + block * out_.spatial * width + ((od * h.out + oh) * w.out) * width;
        lines.clear();
        for (int64_t id = d.First(od); id < d.End(od); ++id)
          for (int64_t ih = h.First(oh); ih < h.End(oh); ++ih) lines.push_back(src + (id * h.in + ih) * w.in * width);
        line.lines = lines.data(), line.line_count = static_cast<int64_t>(lines.size());
        PoolLineRows(window_.max, line, dst);
        const int64_t valid = in_.block ? std::min(in_.block, in_.channels - block * in_.block) : width;
        if (valid < width)  // a blocked layout's padding channels
          for (int64_t ow = 0; ow < w.out; ++ow) std::fill(dst + ow * width + valid, dst + (ow + 1) * width, 0.f);
      }
    });
    return Status::Ok();
  }

 private:
  OwnPoolWindow window_;
  ChannelRows in_, out_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> PoolInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  const OpSpec& spec = op.pool;
  if (op.kind != LayoutFamilyOp::Kind::kPool) return Status::InvalidInput("the pool loop takes a pool");
  auto window = OwnPoolWindowOf(spec);
  if (!window.ok()) return window.status();
  auto in_rows = ChannelRowsOf(src, spec.inputs[0].shape);
  if (!in_rows.ok()) return in_rows.status();
  auto out_rows = ChannelRowsOf(dst, spec.outputs[0].shape);
  if (!out_rows.ok()) return out_rows.status();
  if (in_rows->block != out_rows->block || out_rows->channels != in_rows->channels || out_rows->images != in_rows->images)
    return Status::InvalidInput("the pool loop takes its input and output in one format");
  return std::unique_ptr<Kernel>(new PoolFamilyKernel(*window, *in_rows, *out_rows));
}

}  // namespace tilebank::engine
