// Resize of the spatial axes (nearest or linear, any of ONNX's coordinate transformations: a
// UNet's bilinear upsampling with align_corners) in a layout family dense over channels, on a loop
// of our own: each input line a task reads is filtered along the width once, and each output line
// blends its filtered lines along the height, then the depth, as the arena kernel blends row-major
// planes (engine/backends/simd/resize_blend_simd.h).
#pragma once
#include <memory>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// The kernel of `op` (kResize with its taps) reading `src` and writing `dst`, the family's
// descriptors of its input's and output's shapes. kInvalidInput when they are not dense
// channels-last or channel-blocked with one block, or the op resizes more than three spatial axes.
Result<std::unique_ptr<Kernel>> ResizeInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);

}  // namespace tilebank::engine
