// ReduceMean, ReduceSum and ReduceMax over the channel axis alone (a CBAM spatial attention's
// x.mean(1) and x.amax(1)) of a tensor in a layout family dense over channels, on a loop of our
// own: each position's channel rows folded to one value. The output, one channel, is written
// row-major ([N, 1, spatial...], or [N, spatial...] without kept dims: the same floats), which is
// how every unblocked family lays out one channel.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kChannelReduce) over its input laid out as `md` (the family's descriptor of
// the input's shape). kInvalidInput when `md` is neither dense channels-last nor dense
// channel-blocked, or the op is not such a reduction.
Result<std::unique_ptr<Kernel>> ChannelReduceInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
