// The register-blocked GEMM every cube template is built from: out(n, m, b) = epilogue(sum_k
// a(k, m, b) * bmat(n, k, b)). Knobs (Schedule): vec_blocks (register tile width in vectors),
// tile_m (register tile rows), block_n / block_m (cache block in register tiles), unroll_k,
// loop_order (mn: n-blocks innermost), parallel. Knobs (Format): pack_b (none | block | root:
// B copied into tile-wide panels per cache block, or once as a weight layout) and, with a
// transposed A, pack_a.
#pragma once
#include <Halide.h>

#include <functional>

#include "engine/core/tensor.h"
#include "engine/core/search_space.h"

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
// Defines and schedules the GEMM; the returned Func has extents (N, M, batch). With `b_panels`
// defined (pack_b root only), B is read from it, packed beforehand by PackBPanels, and `bmat` is
// unused; otherwise pack_b root packs B inside the pipeline on every run.
Halide::Func ScheduledGemm(Halide::Func a, Halide::Func bmat, const GemmShape& shape, const Policy& policy,
                           const GemmEpilogue& epilogue, Halide::Func b_panels = Halide::Func());

// The panels pack_b root reads under `policy` for N columns: `width` columns each (the register
// tile's), `count` of them (whole cache blocks, as the guarded loops read).
struct GemmPanels {
  int width = 0, count = 0;
};
GemmPanels GemmPanelsOf(const Policy& policy, int N);
// B (row-major [batches..., K, N], or [batches..., N, K] when `trans_b`) as those panels:
// extents (width, K, count, batches), element (i, k, p, b) = B[b][k][column min(p * width + i,
// N - 1)]. A weight is packed so once, when the kernel is bound.
Halide::Buffer<float> PackBPanels(const Tensor& b, int K, int N, GemmPanels panels, bool trans_b);

}  // namespace tilebank::engine
