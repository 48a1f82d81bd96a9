// The register-blocked GEMM every cube template is built from: out(n, m, b) = epilogue(sum_k
// a(k, m, b) * bmat(n, k, b)). Knobs (Schedule): vec_blocks (register tile width in vectors),
// tile_m (register tile rows), block_n / block_m (cache block in register tiles), unroll_k,
// loop_order (mn: n-blocks innermost), parallel. Knobs (Format): pack_b (none | block | root:
// B copied into tile-wide panels per cache block or once) and, with a transposed A, pack_a.
#pragma once
#include <Halide.h>

#include <functional>

#include "engine/space/search_space.h"

namespace tilebank::engine {

struct GemmShape {
  int M = 0, N = 0, K = 0, batch = 1;
  bool trans_a = false;
};

// Knob domains and constraints for this shape on the host.
SearchSpace GemmSpace(const GemmShape& shape);
// BLIS-style default: register tile from the register count, cache blocks from L1/L2 sizes.
Policy GemmDefaultPolicy(const GemmShape& shape);

using GemmEpilogue = std::function<Halide::Expr(Halide::Expr acc, Halide::Var n, Halide::Var m, Halide::Var b)>;
// Defines and schedules the GEMM; the returned Func has extents (N, M, batch).
Halide::Func ScheduledGemm(Halide::Func a, Halide::Func bmat, const GemmShape& shape, const Policy& policy,
                           const GemmEpilogue& epilogue);

}  // namespace tilebank::engine
