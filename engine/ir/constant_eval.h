// Constant folding on the kernel registry (engine/kernels/kernel_registry.h), as ONNX Runtime's
// constant folding runs its CPU provider's kernels: a node whose inputs are all constant becomes
// the constants its registry kernel computes (and Shape of a value whose shape is known, its dims).
// This is how shape arithmetic (Shape, Gather, Slice, Concat, Range, Where, ScatterND, Expand,
// ConstantOfShape, Cast, ...) becomes constants before the shapes that depend on it are known; the
// kernels that run an op are the ones that fold it, so the two cannot disagree.
#pragma once
#include <string>
#include <vector>

#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// Replaces every node whose inputs are all constant by the constants it computes (setting their
// shape and the dtype their kernel gives), in topological order, so chains fold in one
// call. Left as nodes: ops the registry lacks, those with subgraphs, the QDQ nodes the int8 path
// reads (unless `fold_quantization`: after the QDQ fusion, a weight's fake quantization left
// over, QuantizeLinear -> DequantizeLinear of a float constant, is a float constant), random draws, outputs over 2^24 elements and outputs no constant holds (strings,
// sequences). `shape_known[v]` says whether value v's shape is known (Shape reads only those);
// folded outputs become known. Returns the number of nodes folded; kInvalidInput naming the node
// when its kernel refuses its constant inputs, or a folded value disagrees with a shape already known.
Result<int> EvaluateConstantNodes(Graph* graph, std::vector<bool>* shape_known, bool fold_quantization = false);

}  // namespace tilebank::engine::model
