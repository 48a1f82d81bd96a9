// SGAT's Halide form of a fused subgraph: the anchor's GEMM (matmul.tiled / gemm.tiled, engine/
// templates/gemm_program.h) under a schedule policy of that template, with the chain's post-ops
// computed on each output element inside the register tiles, one pipeline: the intermediate
// tensors are never written, and the anchor keeps the schedule tuned for it.
#pragma once
#include <memory>
#include <vector>

#include "engine/core/kernel.h"
#include "engine/core/chain_step.h"
#include "engine/core/op_spec.h"
#include "engine/core/search_space.h"

namespace tilebank::engine {

class OpTemplate;

// The GEMM template that runs `anchor` in Halide (matmul.tiled, batch_matmul.tiled, gemm.tiled),
// or nullptr when there is none.
const OpTemplate* HalideGemmTemplateFor(const OpSpec& anchor);

// Inputs as OneDnnFusedKernel's: the anchor's, then one per post-op with an operand, in order; the
// output is the last post-op's. kInvalidInput when an operand broadcasts over part of the batch
// only, or the policy does not compile.
Result<std::unique_ptr<Kernel>> HalideFusedGemmKernel(const OpSpec& anchor, const Policy& anchor_policy, const std::vector<ChainStep>& post_ops);

}  // namespace tilebank::engine
