#include "engine/passes/batch_norm_relu_fusion.h"

#include "engine/ir/graph_uses.h"
#include "engine/passes/batch_norm_affine.h"

namespace tilebank::engine::model {

size_t FuseBatchNormRelu(Graph* g) {
  return FuseEachNode(g, [g](size_t i, const GraphUses& u, std::vector<bool>* drop) {
    const Node& bn = g->nodes[i];
    if (!InferenceBatchNorm(*g, bn)) return false;
    const Value& x = g->values[bn.inputs[0]];
    if (x.dtype != "float32" || !x.shape_known || x.shape.size() < 2 || x.kind != ValueKind::kTensor) return false;
    bool constant = true;
    for (size_t k = 1; k < 5; ++k) constant &= g->IsConstant(bn.inputs[k]) && g->values[bn.inputs[k]].constant->size() == x.shape[1];
    const int y = bn.outputs[0];
    if (!constant || !u.Private(y)) return false;
    const size_t r = u.readers[y][0];
    const Node& relu = g->nodes[r];
    if (relu.op_type != "Relu" || relu.inputs.size() != 1 || relu.outputs.size() != 1 || relu.outputs[0] < 0) return false;
    Node fused_node = bn;
    fused_node.name = bn.name + "/fused_relu";
    fused_node.op_type = "FusedBatchNormalization";
    fused_node.outputs = {relu.outputs[0]};
    fused_node.attrs["activation"] = "Relu";
    ReplaceNodes(g, {static_cast<int>(i), static_cast<int>(r)}, std::move(fused_node), drop);
    return true;
  });
}

}  // namespace tilebank::engine::model
