// Group normalization (tilebank's FusedGroupNormalization, InstanceNormalization: a group per
// channel) over a tensor in a layout family, the step between two convolutions of a diffusion UNet
// or an audio encoder: channels-last ([N, spatial, C]) or channel-blocked ([N, C/b, spatial, b], the
// padding channels written 0). Per image: each channel's sum, then its squared deviations from its
// group's mean (float lanes over blocks of rows, added in double, on the threads), then
// y = x * a + b per channel, SiLU after it when asked.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kGroupNorm) over its values laid out as `md` (the family's descriptor of its
// shape). kInvalidInput when `md` is neither channels-last nor blocked over channels alone.
Result<std::unique_ptr<Kernel>> GroupNormInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
