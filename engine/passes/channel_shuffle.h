// ShuffleNet's channel shuffle as torch.onnx writes it, Reshape [N, C, ...] -> [N, c1, ..., ck, ...],
// a Transpose that permutes only those channel factors, Reshape back to [N, C, ...], becomes one
// Gather of the channels (axis 1, constant indices): a permutation of each position's channels.
// Where only channel Slices read the shuffle (ShuffleNet-V2 halves it for the next unit), each
// Slice becomes the Gather of its part, and the shuffled tensor is never written whole.
// Written so, the shuffle runs in a layout family (engine/backends/onednn/channel_gather_in_family.h)
// and the convolutions around it hand over channels-last or blocked tensors, where the three nodes
// kept the block in NCHW with a reorder at every convolution. Only static shapes of rank 3 to 5,
// and intermediate values nothing else reads.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding: the reshapes' shapes are known); returns how
// many shuffles it rewrote.
size_t ChannelShuffleToGather(Graph* graph);

}  // namespace tilebank::engine::model
