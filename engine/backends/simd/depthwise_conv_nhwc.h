// A depthwise convolution (one filter per channel: group = channels = output channels) over NHWC
// activations, hand-written with Highway for the running CPU's best SIMD (chosen at run time): a
// vector of channels of up to eight output columns at a time in registers; any kernel size,
// stride, dilation and padding. The epilogue (bias, a residual Add, activations) runs on the
// accumulators before they are stored.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

struct DepthwiseGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input [n][h][w][c]; c a multiple of 8
  int64_t oh = 0, ow = 0;              // output [n][oh][ow][c]
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  // The order of a row's blocks: each block of columns over all the channels (reads contiguous), or
  // each vector of channels across the row (a filter row's loads stride by the channels).
  bool channels_outer = false;
  int64_t rows() const { return n * oh; }
};

// The weights OIHW (c x 1 x kh x kw) as the kernel reads them: [kh][kw][c].
std::vector<float> DepthwiseWeightsNhwc(const DepthwiseGeometry& g, const float* weights);

// Output rows [row_begin, row_end) (row = image * oh + output row) over channels [c_begin, c_end)
// (multiples of 8); `weights` from DepthwiseWeightsNhwc, e.bias c values or null, e.residual NHWC
// like dst. dst may be the residual (each value is read before it is written).
void DepthwiseConvNhwc(const DepthwiseGeometry& g, const float* src, const float* weights, const ConvEpilogue& e, float* dst, int64_t row_begin,
                       int64_t row_end, int64_t c_begin, int64_t c_end);

}  // namespace tilebank::engine
