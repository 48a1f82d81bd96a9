// A 1-D convolution (any filter width, stride, dilation, padding and groups) over NCW
// activations, hand-written with Highway for the running CPU's best SIMD (chosen at run time): no
// code made at load (oneDNN makes a JIT kernel for each shape and dilation at every load: 0.5-2 ms
// its plain JIT kernel, 4-15 ms brgconv), no im2col. A range of output columns is computed for a
// block of up to 8 output channels at a time, the accumulators in registers: for each input channel
// and filter tap, a few vectors of input columns are loaded once and multiplied into every channel of
// the block. The range's input window (its taps and padding) is read in place where it lies inside
// the row (stride 1), else from a zero-bordered copy, split by a stride into its phases so that each
// tap reads side by side. The epilogue (bias, a residual Add, activations) runs on the accumulators.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

struct Conv1dGeometry {
  int64_t n = 0, c = 0, w = 0;           // input [n][c][w]
  int64_t oc = 0, ow = 0;                // output [n][oc][ow]
  int64_t k = 1, dilation = 1, pad_left = 0, stride = 1;  // input column of output x, tap t: x * stride - pad_left + t * dilation
  int64_t groups = 1;                    // c and oc are multiples of it
  int64_t c_per_group() const { return c / groups; }
  int64_t oc_per_group() const { return oc / groups; }
};

// Output channels one packed block holds (a group's last block is zero-filled past its channels).
inline constexpr int64_t kConv1dChannelBlock = 8;

// The weights ([oc][c / groups][k]) as the kernel reads them: per group, per block of 8 output
// channels, [c / groups][k][8].
std::vector<float> PackConv1dWeights(const Conv1dGeometry& g, const float* weights);

// The float lanes of a vector on this CPU, as the kernel uses them: where ranges of columns split
// without a partial vector inside (correctness does not depend on it).
int64_t Conv1dVectorLanes();

// Image `image`, group `group`: output columns [x_begin, x_end) (0 <= x_begin < x_end <= ow; a range
// of up to a few hundred keeps its input window in cache) for the group's output channels
// [oc_begin, oc_end) (oc_begin a multiple of 8, oc_end at most oc_per_group()).
// `packed` from PackConv1dWeights; e.bias oc values or null; e.residual laid out as dst, which it
// may be (each value is read before it is written).
void DirectConv1dColumns(const Conv1dGeometry& g, const float* src, const float* packed, const ConvEpilogue& e, float* dst,
                         int64_t image, int64_t group, int64_t x_begin, int64_t x_end, int64_t oc_begin, int64_t oc_end);

}  // namespace tilebank::engine
