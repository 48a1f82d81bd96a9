// Simplifies an imported graph before it is bound to kernels: Identity and Dropout are removed
// (their consumers read the input), Shape and every node whose inputs are all constant become
// constants (engine/ir/constant_eval.h; QuantizeLinear and DequantizeLinear too: it runs after
// the QDQ fusion), a Split of a run-time
// value becomes Slices (engine/passes/split_lowering.h), a BatchNormalization that only follows a Conv with constant weights is folded into
// them, and nodes whose outputs nothing reads are dropped.
#pragma once
#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// kInvalidInput naming the node when a folded node's inputs are inconsistent.
Status FoldConstants(Graph* graph);

}  // namespace tilebank::engine::model
