// impl.onednn's own product, policy algo "packed_gemm": C = A B with B packed once into the panels
// of engine/backends/simd/packed_gemm.h (a constant B at load; a B computed by the model on each
// run), and the epilogue SGAT fuses in its output loop: a Gemm's bias, Adds of a row of N values
// (a Linear's bias), one Add of a tensor of the output's shape (a residual) and the activations of
// own_conv_kernel.h (Gelu with erf among them). A with or without a batch axis, B without one.
// Policy algo "auto" (impl.onednn's built-in choice for a float32 product) runs it where it ran the
// instance faster than oneDNN's matmul on this host, timed once per instance and host.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/chain_step.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

inline constexpr char kOwnPackedGemmAlgo[] = "packed_gemm";

// Empty when the own packed GEMM runs `p` with `post_ops` (`out_shape`: the product's output);
// otherwise why not.
std::string OwnPackedGemmRefuses(const GemmProblem& p, const std::vector<ChainStep>& post_ops, const std::vector<int64_t>& out_shape);

// The kernel of `p` (`anchor_inputs`: the op's inputs, the chain's operands after them);
// kInvalidInput naming what it does not run. `runtime_b_kernel`, when given, makes the kernel that
// binds and runs instead where B is not a constant at BindDirect (the built-in choice: that kernel
// reads such a B in place, this one would pack it on every run).
Result<std::unique_ptr<Kernel>> OwnPackedGemmKernel(const GemmProblem& p, const std::vector<int64_t>& out_shape, size_t anchor_inputs,
                                                    const std::vector<ChainStep>& post_ops,
                                                    std::function<std::unique_ptr<Kernel>()> runtime_b_kernel = nullptr);

// Whether the own packed GEMM ran `op` with `post_ops` faster than the kernel `make_rival` makes (of
// the same op and chain) on inputs of the op's shapes, B packed as a constant (own_or_rival.h: the
// two alternated, the verdict remembered per instance and host). False where the own kernel
// refuses the instance; true where the rival cannot run it (oneDNN without the chain's post-ops).
bool OwnPackedGemmRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops, const std::function<std::unique_ptr<Kernel>()>& make_rival);

}  // namespace tilebank::engine
