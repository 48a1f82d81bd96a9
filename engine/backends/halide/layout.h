// Conversions between row-major tensors and the Halide buffers templates work on. Halide lists
// dimensions innermost first, so a row-major [N, C, H, W] tensor is a Halide buffer (W, H, C, N).
#pragma once
#include <Halide.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/core/tensor.h"

namespace tilebank::engine {

// Activation layouts a Format policy may pick for 4-D NCHW tensors.
enum class Layout4d { kNCHW, kNHWC, kNCHWc };
Layout4d ParseLayout4d(const std::string& name);  // "NCHW", "NHWC", "NCHWc" (anything else: NCHW)

// A Halide buffer holding `t` with reversed dimensions (a copy).
Halide::Buffer<float> ToHalide(const Tensor& t);
// The elements of `t` (row-major) as a dense Halide buffer of `extents` (innermost first), whose
// product must be t.size(): a reshape, one copy.
Halide::Buffer<float> ToHalideAs(const Tensor& t, const std::vector<int>& extents);
// An input converter (HalideProgram::AddInput) that reshapes to `extents`.
std::function<Halide::Buffer<float>(const Tensor&)> AsExtents(std::vector<int> extents);
// Back to row-major with the given shape (element count must match).
void FromHalide(const Halide::Buffer<float>& b, const std::vector<int64_t>& shape, Tensor* out);

// A 4-D NCHW tensor in `layout`: NCHW -> (W,H,C,N); NHWC -> (C,W,H,N);
// NCHWc -> (c, W, H, C/block, N) with channels padded to a multiple of `block` with zeros.
Halide::Buffer<float> ToLayout(const Tensor& nchw, Layout4d layout, int block);
// The inverse for an output of logical NCHW shape `shape`.
void FromLayout(const Halide::Buffer<float>& b, Layout4d layout, int block, const std::vector<int64_t>& shape, Tensor* out);

}  // namespace tilebank::engine
