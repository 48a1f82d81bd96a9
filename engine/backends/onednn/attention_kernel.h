// SGAT's fused attention (DESIGN.md "SGAT"; matched by engine/passes/attention_match.h):
// softmax(scale * Q K^T + mask) V with the head Transpose/Reshape/Slice around it folded into how
// Q, K, V and the output are read and written (engine/backends/onednn/strided_view.h). Per tile of heads and
// queries: oneDNN's batched matmul for the scores (the scale as its output scale) into a scratch
// tile, the mask added and oneDNN's softmax there, then oneDNN's matmul with V written straight
// into the output's final layout. With tiles smaller than the whole, the scores are never written
// whole. Knobs: head_tile (heads per pass) and query_tile (queries per pass).
//
// Or, with the knob kernel = one_pass, the own kernel of engine/backends/onednn/one_pass_attention.h:
// per head and block of query_tile queries, both products and the softmax in one pass over a block
// of scores that stays in cache.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "engine/backends/onednn/strided_view.h"
#include "engine/core/kernel.h"
#include "engine/core/search_space.h"

namespace tilebank::engine {

// Every operand as a rank-4 view [batch, heads, rows, columns] into the memory of a kernel input
// (or the output); a view of rank 3 gets a leading batch of 1.
struct AttentionGeometry {
  StridedView query;                // [B, H, Sq, D] in input 0
  StridedView keys_transposed;      // [B, H, D, Sk] in input 1
  StridedView values;               // [B, H, Sk, Dv] in input 2
  StridedView output;               // [B, H, Sq, Dv] in the output
  std::vector<int64_t> output_shape;  // the output value's own shape (row-major)
  float scale = 1;                  // of Q K^T, before the mask
  std::optional<StridedView> mask;  // [B, H, Sq, Sk] (broadcast: strides 0) in input 3, added to the scaled scores
  int64_t batch() const { return query.shape[0]; }
  int64_t heads() const { return query.shape[1]; }
  int64_t queries() const { return query.shape[2]; }
  int64_t keys() const { return keys_transposed.shape[3]; }
};

// The default policy: all heads and queries in one pass of oneDNN's where their scores take at most
// 4 MiB, else the one-pass kernel in blocks of 24 queries.
Policy DefaultAttentionPolicy(const AttentionGeometry& g);
// The policies SGAT tries, in order: the one-pass kernel's blocks of 24, 48, 12 and 96 queries, then
// oneDNN's passes over head tiles dividing the heads by query tiles of the queries and halves of it,
// those whose scores take nearest 1 MiB first.
std::vector<Policy> AttentionPolicies(const AttentionGeometry& g);
// "" when `tiles` is head_tile and query_tile, or kernel one_pass and query_tile, within 1 ..
// heads and 1 .. queries of `g` (positive where `g` is null); else the problem.
std::string AttentionTilesProblem(const Policy& tiles, const AttentionGeometry* g);
std::string AttentionPolicyProblem(const AttentionGeometry& g, const Policy& policy);

// Inputs: the memory holding Q, K, V (and the mask when there is one), in their own row-major shapes;
// the output is `g.output_shape`. kInvalidInput when the policy is bad.
Result<std::unique_ptr<Kernel>> AttentionKernel(const AttentionGeometry& g, const Policy& policy);

}  // namespace tilebank::engine
