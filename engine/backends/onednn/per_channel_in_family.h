// The per-channel operators of a layout family on a loop of our own (engine/backends/simd/
// per_channel_rows.h): Add, Sub, Mul, Div of a [N or 1, C, 1...] operand (a squeeze-and-excitation
// scale) and inference BatchNormalization (kAffine). oneDNN 2.6's binary primitive broadcasts a
// per-channel operand over channels-last data with its generic "jit:uni" kernel: an
// EfficientNet-B0 SE scale of 32x112x112 took 160-870 us, 3-5 times a copy of it.
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kBinary or kAffine) over its values laid out as `md` (the family's
// descriptor of the output's shape; the input has the same). kInvalidInput when `md` is neither
// dense channels-last nor dense channel-blocked, or the operand is not per channel.
Result<std::unique_ptr<Kernel>> PerChannelInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
