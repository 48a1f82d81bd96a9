// Activation steps of engine/backends/simd/conv_epilogue.h (none that reads a residual) over a
// contiguous buffer in place, with Highway for the running CPU's best SIMD. oneDNN 2.6 computes a
// swish post-op at 2-4 times a large 1x1 convolution's own cost; a pass of this after the
// convolution costs about half that (docs/PERFORMANCE.md).
#pragma once
#include <cstdint>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

// e's steps applied in order to data[0, n), the range split among the kernels' threads
// (engine/core/parallel_for.h); each step must be an activation (not kAddResidual), e's bias null.
void ApplyActivationsInPlace(const ConvEpilogue& e, float* data, int64_t n);

}  // namespace tilebank::engine
