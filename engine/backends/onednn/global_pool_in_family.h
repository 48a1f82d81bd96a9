// A global pool (GlobalMaxPool, GlobalAveragePool, or a ReduceMax or ReduceMean over every spatial
// axis: engine/runtime/layout_plan.h) over a layout family dense in channels, on a loop of our own
// (engine/backends/simd/per_channel_rows.h): each run of rows folded into one value per channel, the
// output row-major [N, C]. oneDNN 2.6's pooling primitive took 430 us to pool PointNet's
// 1024 x 2048 channels-last features, about three times a pass over them.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kGlobalPool) reading its input laid out as `md` (the family's descriptor of
// the input's shape). kInvalidInput when `md` is neither dense channels-last nor dense
// channel-blocked.
Result<std::unique_ptr<Kernel>> GlobalPoolInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
