// Add, Sub, Mul, Div of an operand holding one value per position, [N or 1, 1, spatial...] (an
// attention UNet's gate, a CBAM spatial attention map: x * sigmoid(psi)), in a layout family dense
// over channels, on a loop of our own: each channel row of a position takes that position's value.
// The operand comes row-major, whatever the family (one channel lays out alike in every
// unblocked family).
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kPerPositionBinary) over its tensor laid out as `md` (the family's
// descriptor of the output's shape; input 0 has the same). kInvalidInput when `md` is neither dense
// channels-last nor dense channel-blocked, or the operand is not one value per position.
Result<std::unique_ptr<Kernel>> PerPositionInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md);

}  // namespace tilebank::engine
