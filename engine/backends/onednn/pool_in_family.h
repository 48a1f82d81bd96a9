// MaxPool and AveragePool (1-D to 3-D, no dilation) over a layout family dense in channels, on a
// loop of our own: each output line's windows folded in whole vectors of channels
// (engine/backends/simd/window_pool.h), the lines split between the threads. oneDNN 2.6's
// channels-last pooling ran slower on two threads than on one for GoogLeNet's 3x3 windows.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kPool) reading its input as `src` and writing its output as `dst` (the
// family's descriptors, one format). kInvalidInput when either is not dense channels-last or
// channel-blocked, the window is dilated, or an AveragePool counting the padding has windows past
// its pads (ceil_mode).
Result<std::unique_ptr<Kernel>> PoolInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);

}  // namespace tilebank::engine
