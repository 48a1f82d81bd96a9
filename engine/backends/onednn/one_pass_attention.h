// The own attention kernel: softmax(scale * Q K^T + mask) V with no oneDNN primitive. Per head, K^T
// (scaled) and V are packed into the own packed GEMM's panels (engine/backends/simd/packed_gemm.h);
// then per block of `query_tile` queries the scores go into a block of rows that stays in a core's
// cache, the mask is added, the softmax taken in place (engine/backends/simd/softmax_rows_simd.h)
// and the product with V written into the output's own layout. The threads take runs of (head,
// block) pairs, each packing the heads it meets. Where oneDNN's three primitives run a head width
// that is not a multiple of the vector (MobileViT's 24) at a third of the machine, this keeps both
// products in registers over the whole width.
#pragma once
#include <memory>

#include "engine/backends/onednn/attention_kernel.h"

namespace tilebank::engine {

// query_tile >= 1 (AttentionTilesProblem has checked the policy).
std::unique_ptr<Kernel> OnePassAttentionKernel(const AttentionGeometry& g, int64_t query_tile);

}  // namespace tilebank::engine
