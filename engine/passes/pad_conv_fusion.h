// A Pad of zeros on the spatial axes before a Conv (a TCN's causal left padding, an explicit
// ZeroPad2d) or an AveragePool (torch's avg_pool2d with padding and count_include_pad, which
// torch.onnx writes as Pad + AveragePool: Inception's branches) becomes the reader's own pads: it
// reads the border as zeros where a step wrote a padded copy; the AveragePool then counts its pads
// into the average, as it counted the padded zeros. Left alone: other modes and values, pads on the
// batch or channel axes or negative ones, a padded value something else reads, a reader with
// auto_pad, and an AveragePool with ceil_mode or pads of its own it leaves out of the count. The pads
// may come out asymmetric: every Conv and pool kernel takes pads before and after apart.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding: pads are constants); returns how many Pads it folded.
size_t FusePadIntoConvOrPool(Graph* graph);

}  // namespace tilebank::engine::model
