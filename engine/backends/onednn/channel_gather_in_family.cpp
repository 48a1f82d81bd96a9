#include "engine/backends/onednn/channel_gather_in_family.h"

#include <algorithm>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats a thread writes at least.
constexpr int64_t kChannelGatherGrain = int64_t{1} << 14;

// Where channel c of a position lies, from the position's first float: its block's rows come one
// after another, each `spatial` positions of `block` floats (channels-last: one row of all).
int64_t ChannelOffset(const ChannelRows& r, int64_t c) { return r.block ? c / r.block * r.spatial * r.block + c % r.block : c; }
// Where a position's first float lies in its image.
int64_t PositionOffset(const ChannelRows& r, int64_t p) { return p * (r.block ? r.block : r.channels); }

class ChannelGatherFamilyKernel : public DirectFamilyKernel {
 public:
  ChannelGatherFamilyKernel(ChannelRows in, ChannelRows out, const std::vector<int64_t>& channels) : in_(in), out_(out) {
    for (int64_t j = 0; j < out_.padded; ++j) {
      out_offsets_.push_back(ChannelOffset(out_, j));
      in_offsets_.push_back(j < out_.channels ? ChannelOffset(in_, channels[static_cast<size_t>(j)]) : -1);
    }
  }
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const int64_t positions = out_.images * out_.spatial, width = out_.padded;
    ParallelFor(positions, std::max<int64_t>(1, kChannelGatherGrain / width), [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end; ++at) {
        const int64_t image = at / out_.spatial, p = at % out_.spatial;
        const float* from = in[0] + image * in_.image_size() + PositionOffset(in_, p);
        float* to = out + image * out_.image_size() + PositionOffset(out_, p);
        if (!out_.block) {  // channels-last: the output's channels in a row
          for (int64_t j = 0; j < width; ++j) to[j] = from[in_offsets_[j]];
          continue;
        }
        for (int64_t j = 0; j < width; ++j) to[out_offsets_[j]] = in_offsets_[j] >= 0 ? from[in_offsets_[j]] : 0.0f;
      }
    });
    return Status::Ok();
  }

 private:
  ChannelRows in_, out_;
  std::vector<int64_t> in_offsets_, out_offsets_;  // per output channel (padded ones too: input -1)
};

}  // namespace

Result<std::unique_ptr<Kernel>> ChannelGatherInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  if (op.kind != LayoutFamilyOp::Kind::kChannelGather || op.inputs.size() != 1 || static_cast<int64_t>(op.channels.size()) != op.output[1])
    return Status::InvalidInput("the channel gather loop takes a Gather of channels");
  auto in = ChannelRowsOf(src, op.inputs[0]);
  if (!in.ok()) return in.status();
  auto out = ChannelRowsOf(dst, op.output);
  if (!out.ok()) return out.status();
  if (in->images != out->images || in->spatial != out->spatial) return Status::InvalidInput("a channel gather that changes other axes");
  for (int64_t c : op.channels)
    if (c < 0 || c >= in->channels) return Status::InvalidInput("a channel gather's index is out of its input's channels");
  return std::unique_ptr<Kernel>(new ChannelGatherFamilyKernel(*in, *out, op.channels));
}

}  // namespace tilebank::engine
