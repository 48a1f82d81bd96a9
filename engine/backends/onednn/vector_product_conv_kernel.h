// impl.onednn's own convolution of one output pixel, policy algo "vector_product": a filter that
// covers the whole unpadded input (1x1 over 1x1 in a squeeze-excitation, a classifier written as a
// convolution), so each image is a vector times the weights (engine/backends/simd/vector_product.h),
// with the epilogue SGAT fuses (bias, a residual Add, Relu, LeakyRelu, Clip, Sigmoid, Swish,
// HardSwish, Tanh, GeluTanh) in its output loop. oneDNN's primitive spends more setting up a run
// than this computes; a product too small to share runs on the calling thread alone. Layout
// "plain" (or "auto"): NCHW, which for one pixel is every layout's order of the channels.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"

namespace tilebank::engine {

inline constexpr char kOwnVectorProductAlgo[] = "vector_product";

// Empty when the own vector product runs `p`; otherwise why not.
std::string OwnVectorProductRefuses(const ConvProblem& p);

// The kernel of `p` with `post_ops` (their operands are the kernel's inputs after the
// convolution's); kInvalidInput naming what it does not run.
Result<std::unique_ptr<Kernel>> OwnVectorProductConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape,
                                                           const std::vector<ChainStep>& post_ops, const std::string& layout);

}  // namespace tilebank::engine
