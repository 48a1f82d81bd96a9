// The sliding window that Conv, ConvTranspose and the pooling ops share: kernel, strides,
// dilations and pads per spatial dimension (auto_pad resolved), the output's spatial size, and a
// walk over every N-D position. Inputs are [N, C, D1, ..., Dn], n >= 1.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/kernels/op_kernel.h"

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

  // Resolves the window of a Conv or pool node over input spatial dims `in` (kernel from
  // `kernel_shape`, or `weight_kernel` where the attribute is absent). `ceil_mode` is the pools'.
  // An error names the node when attributes and shapes disagree or an output dim is below 1.
  static Result<SpatialWindow> Resolve(const KernelInfo& info, const std::vector<int64_t>& in, const std::vector<int64_t>& weight_kernel,
                                       bool ceil_mode = false);
};

// Calls f(index) for every N-D index below `dims` in row-major order (once, with an empty index,
// when `dims` is empty).
inline void ForEachIndex(const std::vector<int64_t>& dims, const std::function<void(const std::vector<int64_t>&)>& f) {
  for (int64_t d : dims)
    if (d <= 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    f(index);
    size_t k = dims.size();
    while (k > 0 && ++index[k - 1] == dims[k - 1]) index[--k] = 0;
    if (k == 0) return;
  }
}

// Row-major offset of `index` within `dims`.
inline int64_t OffsetOf(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t offset = 0;
  for (size_t k = 0; k < dims.size(); ++k) offset = offset * dims[k] + index[k];
  return offset;
}

// The elements of a numeric tensor as doubles, and back (converted as SetAt converts).
inline std::vector<double> AsDoubles(const TypedTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) v[i] = t.At(i);
  return v;
}
inline TypedTensor FromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  TypedTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.SetAt(i, v[i]);
  return t;
}

}  // namespace tilebank::engine::kernels
