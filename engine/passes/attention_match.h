// Finds attention blocks for SGAT (engine/passes/partition.h): MatMul(Q, K^T), scaled by constants
// (Mul or Div, on the product or on Q before it), an optional additive mask (Add: the causal mask of
// a decoder, the key padding mask of an encoder), Softmax over the keys, MatMul with V; with the
// Transpose, Reshape, Squeeze/Unsqueeze/Flatten and Slice nodes that split the heads before it and
// merge them after it folded into strided views (engine/backends/onednn/strided_view.h), as far as each
// needs no copy. Every intermediate value is read by the block alone and is not a model output, so
// that running the block as one kernel changes nothing the rest of the graph sees.
#pragma once
#include <vector>

#include "engine/backends/onednn/attention_kernel.h"
#include "engine/ir/graph.h"

namespace tilebank::engine::model {

struct AttentionMatch {
  int scores_matmul = -1;     // node index of MatMul(Q, K^T)
  std::vector<int> nodes;     // every node of the block, in graph order; the last writes `output`
  std::vector<int> inputs;    // the values the kernel reads: Q's, K's and V's memory, then the mask's
  int output = -1;            // the value the block writes
  AttentionGeometry geometry;
};

// The attention blocks of `graph`, in graph order, no node in two of them.
std::vector<AttentionMatch> FindAttentionBlocks(const Graph& graph);

}  // namespace tilebank::engine::model
