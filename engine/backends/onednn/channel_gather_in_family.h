// A Gather of channels by constant indices (axis 1: output channel j is input channel
// indices[j]; ShuffleNet's channel shuffle, engine/passes/channel_shuffle.h) in a layout family
// dense over channels, on a loop of our own: each position's channels picked from its input's. The
// padded channels of a blocked output's last block are written zero, as oneDNN's kernels leave them.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kChannelGather) reading `src` and writing `dst` (the family's descriptors of
// its input's and output's shapes). kInvalidInput when either is neither dense channels-last nor
// dense channel-blocked, or an index is out of the input's channels.
Result<std::unique_ptr<Kernel>> ChannelGatherInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);

}  // namespace tilebank::engine
