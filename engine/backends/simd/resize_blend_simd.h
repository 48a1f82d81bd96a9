// The blends of a linear Resize over rows of channels (engine/backends/onednn/resize_in_family.h),
// with Highway for the running CPU's best SIMD: a line of output positions filtered along the width
// from one input line, and two filtered lines blended into one.
#pragma once
#include <cstdint>

#include "engine/core/resize_taps.h"

namespace tilebank::engine {

// y[j] = (1 - w) * a[j] + w * b[j] for j < n (y may be a or b).
void BlendRows(const float* a, const float* b, float w, float* y, int64_t n);

// For each of `count` output positions o (rows of `width` floats in y): the blend of x's rows
// taps[o].lo and taps[o].hi by taps[o].w, or a copy of row taps[o].lo where the two are one.
void BlendTapRows(const float* x, int64_t width, const ResizeTap* taps, int64_t count, float* y);

}  // namespace tilebank::engine
