// impl.onednn's own convolution on the packed GEMM (policy algo "packed_gemm"): in NHWC the output
// positions of all images are the rows of one product by the weights, each position's window read
// in place as one segment of input channels per filter tap (engine/backends/simd/packed_gemm.h), the
// input copied into zero-bordered images first where the convolution pads. No im2col buffer, any
// strides, dilations and pads, ungrouped. oneDNN 2.6 without AVX-512 has no JIT kernel for a dilated
// convolution and runs it by im2col and GEMM (a TCN's dilated Conv1d 64 -> 64 over 1000 positions:
// 435-478 us against 234 undilated on a Zen 3); it is the built-in choice there. Layout "nhwc" or
// "auto": NHWC inside and handed over; "plain": NCHW outside, reordered.
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

// Empty when the own packed-GEMM convolution runs `p`; otherwise why not.
std::string OwnPackedGemmConvRefuses(const ConvProblem& p);

// Whether the own packed-GEMM convolution runs `p` and takes its filter bank in chunks of its depth (a bank
// too large for a core's cache: engine/backends/simd/packed_gemm.h), reading it once per block of up
// to 96 output positions where oneDNN's brgconv reads it again for each output row (a capsule network's 9x9
// stride-2 convolution of 256 channels: 4.9 against 2.7 ms). impl.onednn's built-in choice for such
// a convolution is "auto": the two timed at bind (own_or_rival.h).
bool OwnPackedGemmConvChunksFilters(const ConvProblem& p);

// Whether the own packed-GEMM convolution ran `op` with `post_ops` faster than the kernel
// `make_rival` makes, each in its own layout inside, NCHW reordered at Prepare (own_or_rival.h:
// timed once per instance and host).
bool OwnPackedGemmConvRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops, const std::function<std::unique_ptr<Kernel>()>& make_rival);

// The kernel of `p` with `post_ops` (the activations of own_conv_kernel.h and a residual Add);
// kInvalidInput naming what it does not run.
Result<std::unique_ptr<Kernel>> OwnPackedGemmConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape,
                                                        const std::vector<ChainStep>& post_ops, const std::string& layout);

}  // namespace tilebank::engine
