// A MaxPool's or AveragePool's windows as the own pool loops take them (engine/backends/simd/
// window_pool.h): three axes D, H, W, undilated, every window holding an input.
#pragma once
#include <array>
#include <vector>

#include "base/status.h"
#include "engine/backends/simd/window_pool.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

struct OwnPoolWindow {
  bool max = true;          // MaxPool; AveragePool otherwise
  bool include_pad = false; // AveragePool counting the padding
  std::array<PoolAxis, 3> axes;  // D, H, W (the leading ones of size 1 for 1-D and 2-D pools)
  int64_t pad_divisor() const { return include_pad ? axes[0].kernel * axes[1].kernel * axes[2].kernel : 0; }
};

// kInvalidInput when `spec` is not a 1-D to 3-D MaxPool or AveragePool with one output, its window
// is dilated, a window holds padding only, or an AveragePool counting the padding has windows past
// its pads (ceil_mode).
Result<OwnPoolWindow> OwnPoolWindowOf(const OpSpec& spec);

// One spatial axis of a pool as resolved from its node: `dilation` 1 is undilated.
struct PoolAxisParts {
  int64_t in, out, kernel, stride, pad_begin, pad_end, dilation;
};
// The window over 1 to 3 `axes` (D, H, W; the last ones given); kInvalidInput where an axis is
// dilated or a window holds padding only (a pad of a kernel or more, or a negative one).
Result<OwnPoolWindow> OwnPoolWindowOfAxes(bool max, bool include_pad, const std::vector<PoolAxisParts>& axes);

}  // namespace tilebank::engine
