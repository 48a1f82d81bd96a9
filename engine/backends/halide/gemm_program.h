// The pipeline of the GEMM templates (matmul.tiled, batch_matmul.tiled, gemm.tiled), shared with
// SGAT's fused Halide subgraphs (engine/backends/halide/halide_fused_gemm.h).
#pragma once
#include <Halide.h>

#include <functional>

#include "engine/backends/halide/halide_program.h"
#include "engine/core/op_spec.h"
#include "engine/core/search_space.h"

namespace tilebank::engine {

// Applied to each output element after the op's own epilogue (Gemm's alpha, beta and C), inside
// the register tiles; (n, m, b) are the element's column, row and collapsed batch. It may add
// inputs to `prog` (operands read at those coordinates).
using GemmThen = std::function<Halide::Expr(HalideProgram& prog, Halide::Expr value, Halide::Var n, Halide::Var m, Halide::Var b)>;

// `op` (MatMul, BatchMatMul or Gemm that AnalyzeGemm accepts) under a GEMM template `policy`.
HalideProgram DefineGemmProgram(const OpSpec& op, const Policy& policy, const GemmThen& then = nullptr);

}  // namespace tilebank::engine
