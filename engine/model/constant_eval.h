// Evaluates nodes whose inputs are all constant (and Shape of a value whose shape is known) into
// constants, computing each result's shape from its inputs alone: this is how shape arithmetic
// (Shape, Gather, Slice, Concat, Range, Mod, Where, Equal, ScatterND, Expand, ConstantOfShape,
// Cast, Div, ...) becomes constants before the shapes that depend on it are known.
#pragma once
#include <string>
#include <vector>

#include "engine/model/graph.h"
#include "repo/status.h"

namespace tilebank::engine::model {

// Whether EvaluateConstantNodes can evaluate `op_type` on constants.
bool CanEvaluate(const std::string& op_type);

// Replaces every node it can evaluate by the constants it computes (setting their shape and
// dtype), in topological order, so chains fold in one call. `shape_known[v]` says whether value
// v's shape is known (Shape reads only those); folded outputs become known. Returns the number of
// nodes folded; kInvalidInput naming the node when its constant inputs are inconsistent, or when
// a folded value disagrees with a shape that was already known.
Result<int> EvaluateConstantNodes(Graph* graph, std::vector<bool>* shape_known);

}  // namespace tilebank::engine::model
