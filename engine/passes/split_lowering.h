// Split becomes one Slice per output before the graph is bound: the executor computes one output
// per node, and a Slice is the same copy of one output's part of the input.
#pragma once
#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// Rewrites every Split of `graph` whose input is computed at run time into Slice nodes (named
// "<split>/part<k>"), each reading its output's extent along the axis at the running offset;
// outputs nothing reads get no Slice. The output shapes (known once imported) give the extents.
// kInvalidInput naming the node when its outputs do not tile the input along the axis.
Status LowerSplits(Graph* graph);

}  // namespace tilebank::engine::model
