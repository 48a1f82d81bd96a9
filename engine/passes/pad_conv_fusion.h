// A Pad of zeros on the spatial axes before a Conv (a TCN's causal left padding, an explicit
// ZeroPad2d) becomes the Conv's own pads: the convolution reads the border as zeros where a step
// wrote a padded copy. Left alone: other modes and values, pads on the batch or channel axes or
// negative ones, a padded value something else reads, and a Conv with auto_pad. The pads may come
// out asymmetric: every Conv kernel takes pads before and after apart.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding: pads are constants); returns how many Pads it folded.
size_t FusePadIntoConv(Graph* graph);

}  // namespace tilebank::engine::model
