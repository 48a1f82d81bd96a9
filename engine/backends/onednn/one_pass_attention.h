// The own attention kernel: softmax(scale * Q K^T + mask) V with no oneDNN primitive. Per head, K^T
// (scaled) and V are packed into the own packed GEMM's panels (engine/backends/simd/packed_gemm.h);
// then per block of `query_tile` queries the scores go into a block of rows that stays in a core's
// cache, the mask is added, the softmax's exponentials are taken in place
// (engine/backends/simd/softmax_rows_simd.h), and their product with V is written into the
// output's own layout, each row scaled there by 1 / its sum. The threads take runs of (head, block)
// pairs, each packing the heads it meets. oneDNN's primitives over all heads write every score to
// memory first: MobileViT's 64 MiB of them ran at about a fifth of this machine's peak.
#pragma once
#include <memory>

#include "engine/backends/onednn/attention_kernel.h"

namespace tilebank::engine {

// query_tile >= 1 (AttentionTilesProblem has checked the policy).
std::unique_ptr<Kernel> OnePassAttentionKernel(const AttentionGeometry& g, int64_t query_tile);

}  // namespace tilebank::engine
