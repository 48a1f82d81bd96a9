// impl.onednn's own depthwise convolution, policy algo "depthwise_nhwc" (impl "default": blocks of
// columns over all the channels; "by_channel": a vector of channels across each row): one filter per channel
// (group = channels = output channels), any kernel size, stride, dilation and padding, over NHWC
// activations (engine/backends/simd/depthwise_conv_nhwc.h), with the epilogue SGAT fuses (bias, a
// residual Add, Relu, LeakyRelu, Clip, Sigmoid, Swish, HardSwish, Tanh, GeluTanh) in its own
// output loop, where oneDNN 2.6 runs a separate pass per post-op. Layout "nhwc" (or "auto") hands
// NHWC over to neighbours that keep it; "plain" reorders from and to NCHW.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"

namespace tilebank::engine {

inline constexpr char kOwnDepthwiseAlgo[] = "depthwise_nhwc";
inline constexpr char kOwnDepthwiseByChannel[] = "by_channel";

// Empty when the own depthwise convolution runs `p`; otherwise why not.
std::string OwnDepthwiseRefuses(const ConvProblem& p);
// What it offers for `p` (none where it refuses it): algorithm, layout and impl.
struct OwnDepthwiseOffer {
  std::string algo, layout, impl;
  bool operator==(const OwnDepthwiseOffer& o) const { return algo == o.algo && layout == o.layout && impl == o.impl; }
};
std::vector<OwnDepthwiseOffer> OwnDepthwiseOffers(const ConvProblem& p);

// The kernel of `p` with `post_ops` (their operands are the kernel's inputs after the
// convolution's); kInvalidInput naming what it does not run.
Result<std::unique_ptr<Kernel>> OwnDepthwiseConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, const std::vector<ChainStep>& post_ops,
                                                       const std::string& layout, const std::string& impl = "default");

}  // namespace tilebank::engine
