// ConvTranspose whose kernel tiles the output (strides = kernel, no pads, dilation 1, one group: a
// UNet's 2x2 stride-2 upsampling) on channels-last tensors, the layout its neighbouring
// convolutions hand over: one GEMM, X [N positions, C] times W [C, taps x M] (W's taps moved
// first once), then each input position's taps rows of M channels copied, bias added, to their
// output positions. Channels-last only (a blocked family is refused: the group stays row-major and
// the arena's row-major kernel runs it).
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kConvTransposeTiled) over its values laid out as `md` (the family's
// descriptor of the output's shape). kInvalidInput when `md` is not channels-last.
Result<std::unique_ptr<Kernel>> ConvTransposeInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
