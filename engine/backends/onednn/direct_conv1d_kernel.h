// impl.onednn's own 1-D convolution, policy algo "direct_1d": any filter width, stride, dilation,
// padding and groups, over NCHW activations of height 1 (a Conv1d as the lifting pass hands it
// over), computed in place by engine/backends/simd/direct_conv1d.h with the epilogue SGAT fuses
// (bias, a residual Add, the activations of own_conv_kernel.h). It makes no code at load, where
// oneDNN makes a JIT kernel for each width and dilation at every load (its plain JIT kernel 0.5-2 ms
// each, brgconv 4-15 ms: a HiFi-GAN's 37 took 45-75 ms). Layout "plain" (or "auto"): NCHW, read
// and written where it lies.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

inline constexpr char kOwnDirect1dAlgo[] = "direct_1d";

// Empty when the own 1-D convolution runs `p`; otherwise why not.
std::string OwnDirectConv1dRefuses(const ConvProblem& p);

// Whether the own 1-D convolution ran `op` with `post_ops` faster than the kernel `make_rival`
// makes, each charged its making over 200 runs (own_or_rival.h: timed once per instance and host).
bool OwnDirectConv1dRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops,
                               const std::function<std::unique_ptr<Kernel>()>& make_rival);

// The kernel of `p` with `post_ops`; kInvalidInput naming what it does not run.
Result<std::unique_ptr<Kernel>> OwnDirectConv1dKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, const std::vector<ChainStep>& post_ops,
                                                      const std::string& layout);

}  // namespace tilebank::engine
