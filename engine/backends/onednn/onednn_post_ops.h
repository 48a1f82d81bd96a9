// SGAT's fused implementation: impl.onednn's Conv, MatMul or Gemm kernel with elementwise
// operators applied to its output inside the primitive (oneDNN post-ops), so the intermediate
// tensors are never written. A post-op is an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh,
// HardSwish) or a binary op (Add, Mul, Sub, Div) with an operand that broadcasts to the output.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/kernel.h"
#include "engine/core/search_space.h"
#include "engine/core/chain_step.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

// Whether oneDNN runs `op_type` as a post-op.
bool IsOneDnnPostOp(const std::string& op_type);

// Whether `step` may be a chain's sum post-op: an Add of an operand of the output's own shape (the
// chain's first such Add is; engine/backends/onednn/onednn_post_op_chain.h).
bool IsSumCandidate(const ChainStep& step, const std::vector<int64_t>& output_shape);

// Whether oneDNN's convolution for `conv` (its default, in its own layouts) adds a sum post-op's
// residual to finished sums of products. Its direct JIT kernels below AVX-512 (jit:avx2, jit:sse41)
// start their accumulators from the residual instead: each of the IC x KH x KW products then rounds
// at the residual's magnitude (RAFT's flow, a small update added to a coordinate grid of up to 127,
// came out up to 10% off). Such a kernel takes no sum (ConvKernel refuses the chain); a chain stops
// before it (engine/runtime/executor_bind.cpp).
bool OneDnnConvAddsResidualOnce(const OpSpec& conv);

// The kernel's inputs are the anchor's, then one per post-op with an operand, in order; its output
// is the last post-op's. kInvalidInput when oneDNN cannot fuse them (a broadcast it lacks, or only a
// reference implementation would run them).
// `anchor_policy`: the anchor's impl.onednn policy (its implementation, algorithm and layout;
// empty: oneDNN's first choice).
Result<std::unique_ptr<Kernel>> OneDnnFusedKernel(const OpSpec& anchor, const std::vector<ChainStep>& post_ops, const Policy& anchor_policy = {});

}  // namespace tilebank::engine
