// The sliding window that Conv, ConvTranspose and the pooling ops share: kernel, strides,
// dilations and pads per spatial dimension (auto_pad resolved), the output's spatial size, and
// each output position's taps. Inputs are [N, C, D1, ..., Dn], n >= 1.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/kernels/op_kernel.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {

struct SpatialWindow {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
  int64_t spatial_size_in = 1, spatial_size_out = 1, kernel_size = 1;

  size_t rank() const { return in.size(); }

  // For output position o and kernel position k (both row-major), taps[o * kernel_size + k] is
  // the row-major input position the window reads there, or -1 where it falls in the padding.
  // `in_padded`, when given, gets 1 where the tap lies within the input and its explicit pads
  // (AveragePool's count_include_pad counts those).
  std::vector<int64_t> Taps(std::vector<uint8_t>* in_padded = nullptr) const;

  // The window of these parts, its sizes computed from them.
  static SpatialWindow Of(std::vector<int64_t> in, std::vector<int64_t> kernel, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                          std::vector<int64_t> pad_begin, std::vector<int64_t> pad_end, std::vector<int64_t> out);

  // Resolves the window of a Conv or pool node over input spatial dims `in` (kernel from
  // `kernel_shape`, or `weight_kernel` where the attribute is absent). `ceil_mode` is the pools'.
  // An error names the node when attributes and shapes disagree or an output dim is below 1.
  static Result<SpatialWindow> Resolve(const KernelInfo& info, const std::vector<int64_t>& in, const std::vector<int64_t>& weight_kernel,
                                       bool ceil_mode = false);
};

}  // namespace tilebank::engine::kernels
