// impl.onednn's own Winograd convolutions, policy algo "winograd_f2", "winograd_f4", "winograd_f6":
// F(m, 3) for 3x3, stride-1, undilated, ungrouped convolutions, where this oneDNN has no Winograd
// (2.6 has none on AVX2 and none for every AVX-512 CPU) or a slower one. The tiles are transformed
// by engine/backends/simd/winograd_transforms.h, the alpha^2 products of the transformed tiles with
// the transformed weights run as one batched oneDNN matmul (its weights prepacked at load), and the
// epilogue (bias, a residual Add, Relu, LeakyRelu, Clip, Sigmoid, Swish, HardSwish, Tanh, GeluTanh)
// runs in the output transform.
// Activations are in oneDNN's channel-blocked layout (nChw16c or nChw8c, whichever its direct
// convolution of the instance picks here), handed over by neighbours that keep it, else reordered
// from and to NCHW (layout "plain": always).
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

// m of an own Winograd algorithm name ("winograd_f4" -> 4); 0 for any other name.
int OwnWinogradTile(const std::string& algo);
// Empty when the own Winograd runs `p`; otherwise why not.
std::string OwnWinogradRefuses(const ConvProblem& p);
// The (algorithm, layout) pairs the own Winograd offers for `p` (none where it refuses it), smallest
// tile first; layout "blocked", "plain", and "nhwc" where the channel counts allow.
std::vector<std::pair<std::string, std::string>> OwnWinogradOffers(const ConvProblem& p);

// The kernel of `p` with tile `m` and `post_ops` (their operands are the kernel's inputs after the
// convolution's); kInvalidInput naming what it does not run.
Result<std::unique_ptr<Kernel>> OwnWinogradConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, int m,
                                                      const std::vector<ChainStep>& post_ops, const std::string& layout);

}  // namespace tilebank::engine
