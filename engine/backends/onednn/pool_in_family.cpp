#include "engine/backends/onednn/pool_in_family.h"

#include <algorithm>
#include <array>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/backends/simd/window_pool.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats of output a thread writes at least.
constexpr int64_t kPoolGrain = 4096;

class PoolFamilyKernel : public Kernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  PoolFamilyKernel(bool max, bool include_pad, ChannelRows in, ChannelRows out, std::array<PoolAxis, 3> axes)
      : max_(max), include_pad_(include_pad), in_(in), out_(out), axes_(axes) {}
  Status Prepare(const std::vector<const Tensor*>&) override { return Unsupported(); }
  Status Run() override { return Unsupported(); }
  Status Fetch(Tensor*) override { return Unsupported(); }

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const PoolAxis &d = axes_[0], &h = axes_[1], &w = axes_[2];
    const int64_t blocks = in_.block ? in_.padded / in_.block : 1, width = in_.width;
    const int64_t tasks = in_.images * blocks * d.out * h.out;  // one output line (all of W) each
    ParallelFor(tasks, std::max<int64_t>(1, kPoolGrain / std::max<int64_t>(1, w.out * width)), [&](int64_t begin, int64_t end) {
      std::vector<const float*> lines;
      PoolLine line;
      line.w = w, line.width = width;
      line.pad_divisor = include_pad_ ? d.kernel * h.kernel * w.kernel : 0;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t oh = t % h.out, od = t / h.out % d.out, block = t / (h.out * d.out) % blocks, image = t / (h.out * d.out * blocks);
        const float* src = in[0] + image * in_.image_size() + block * in_.spatial * width;
        float* dst = out + image * out_.image_size() + block * out_.spatial * width + ((od * h.out + oh) * w.out) * width;
        lines.clear();
        for (int64_t id = d.First(od); id < d.End(od); ++id)
          for (int64_t ih = h.First(oh); ih < h.End(oh); ++ih) lines.push_back(src + (id * h.in + ih) * w.in * width);
        line.lines = lines.data(), line.line_count = static_cast<int64_t>(lines.size());
        PoolLineRows(max_, line, dst);
        const int64_t valid = in_.block ? std::min(in_.block, in_.channels - block * in_.block) : width;
        if (valid < width)  // a blocked layout's padding channels
          for (int64_t ow = 0; ow < w.out; ++ow) std::fill(dst + ow * width + valid, dst + (ow + 1) * width, 0.f);
      }
    });
    return Status::Ok();
  }

 private:
  static Status Unsupported() { return Status::InvalidInput("a layout-family kernel runs only on a model's direct path"); }

  bool max_, include_pad_;
  ChannelRows in_, out_;
  std::array<PoolAxis, 3> axes_;  // D, H, W (the leading ones of size 1 for 1-D and 2-D pools)
};

}  // namespace

Result<std::unique_ptr<Kernel>> PoolInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  const OpSpec& spec = op.pool;
  if (op.kind != LayoutFamilyOp::Kind::kPool || (spec.op_type != "MaxPool" && spec.op_type != "AveragePool") || spec.inputs.empty() ||
      spec.outputs.size() != 1)
    return Status::InvalidInput("the pool loop takes a MaxPool or AveragePool with one output");
  const auto& in_shape = spec.inputs[0].shape;
  const auto& out_shape = spec.outputs[0].shape;
  const size_t spatial = in_shape.size() - 2;
  if (in_shape.size() < 3 || in_shape.size() > 5 || out_shape.size() != in_shape.size()) return Status::InvalidInput("the pool loop takes 1-D to 3-D pools");
  auto in_rows = ChannelRowsOf(src, in_shape);
  if (!in_rows.ok()) return in_rows.status();
  auto out_rows = ChannelRowsOf(dst, out_shape);
  if (!out_rows.ok()) return out_rows.status();
  if (in_rows->block != out_rows->block || out_rows->channels != in_rows->channels || out_rows->images != in_rows->images)
    return Status::InvalidInput("the pool loop takes its input and output in one format");
  const PoolWindow window = WindowOf(spec);
  const bool max = spec.op_type == "MaxPool", include_pad = !max && spec.Int("count_include_pad", 0) != 0;
  if (include_pad && window.padded_past_pads) return Status::InvalidInput("the pool loop does not count padding past the pads");
  std::array<PoolAxis, 3> axes;
  for (size_t i = 0; i < spatial; ++i) {
    PoolAxis& a = axes[3 - spatial + i];
    a = {in_shape[i + 2], out_shape[i + 2], window.kernel[i], window.strides[i], window.pad_l[i]};
    if (window.dilation[i] != 0) return Status::InvalidInput("the pool loop takes undilated windows");
    // Every window must hold an input (ONNX leaves an all-padding window's value open).
    if (a.pad >= a.kernel || window.pad_r[i] >= a.kernel || a.kernel < 1 || a.stride < 1)
      return Status::InvalidInput("the pool loop takes windows that each hold an input");
  }
  return std::unique_ptr<Kernel>(new PoolFamilyKernel(max, include_pad, *in_rows, *out_rows, axes));
}

}  // namespace tilebank::engine
