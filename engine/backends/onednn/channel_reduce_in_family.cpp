#include "engine/backends/onednn/channel_reduce_in_family.h"

#include <algorithm>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Positions a task folds at least.
constexpr int64_t kPositionsPerTask = 256;

class ChannelReduceFamilyKernel : public DirectFamilyKernel {
 public:
  ChannelReduceFamilyKernel(PerChannelFold fold, bool mean, ChannelRows rows) : fold_(fold), mean_(mean), rows_(rows) {}
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor

  // in[0]: the tensor in the family; out: row-major, one value per image and position.
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const ChannelRows& r = rows_;
    const int64_t blocks = r.rows / r.spatial;  // 1 channels-last
    const float scale = 1.f / static_cast<float>(r.channels);
    ParallelFor(r.images * r.spatial, kPositionsPerTask, [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end;) {  // a run of positions of one image
        const int64_t image = at / r.spatial, position = at % r.spatial, count = std::min(end - at, r.spatial - position);
        for (int64_t b = 0; b < blocks; ++b) {
          const int64_t valid = std::min(r.width, r.channels - b * r.width);
          const float* x = in[0] + (image * r.rows + b * r.spatial + position) * r.width;
          FoldEachRow(fold_, x, count, r.width, valid, out + at, b > 0);
        }
        if (mean_) for (int64_t k = at; k < at + count; ++k) out[k] *= scale;
        at += count;
      }
    });
    return Status::Ok();
  }

 private:
  PerChannelFold fold_;  // kMax or kSum
  bool mean_ = false;    // the sum scaled by 1 / C
  ChannelRows rows_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> ChannelReduceInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  if (op.kind != LayoutFamilyOp::Kind::kChannelReduce || op.inputs.size() != 1) return Status::InvalidInput("a channel reduction of one input");
  const std::string& t = op.op_type;
  if (t != "ReduceMean" && t != "ReduceSum" && t != "ReduceMax") return Status::InvalidInput("a channel reduction is ReduceMean, ReduceSum or ReduceMax, not " + t);
  const std::vector<int64_t>& in = op.inputs[0];
  std::vector<int64_t> kept = in, dropped = in;  // the output's shape with dims kept, and without
  if (in.size() >= 3) kept[1] = 1, dropped.erase(dropped.begin() + 1);
  if (in.size() < 3 || (op.output != kept && op.output != dropped))
    return Status::InvalidInput("a channel reduction writes one value per image and position");
  auto rows = ChannelRowsOf(md, in);
  if (!rows.ok()) return rows.status();
  return std::unique_ptr<Kernel>(new ChannelReduceFamilyKernel(t == "ReduceMax" ? PerChannelFold::kMax : PerChannelFold::kSum, t == "ReduceMean", *rows));
}

}  // namespace tilebank::engine
