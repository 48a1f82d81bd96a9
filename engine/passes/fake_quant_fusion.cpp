#include "engine/passes/fake_quant_fusion.h"

#include "engine/ir/graph_uses.h"

namespace tilebank::engine::model {
namespace {

// A scalar constant of `dtype` (a one-element tensor), or no input at all when `optional`.
bool ScalarConstant(const Graph& g, const Node& n, size_t k, const std::string& dtype, bool optional) {
  if (k >= n.inputs.size() || n.inputs[k] < 0) return optional;
  const int v = n.inputs[k];
  return g.IsConstant(v) && g.values[v].constant->size() == 1 && g.values[v].dtype == dtype;
}

// Q's and D's scale and zero point: the same values (constants of one value, or equal scalars).
bool SameParameters(const Graph& g, const Node& q, const Node& d) {
  for (size_t k = 1; k < 3; ++k) {
    const int a = k < q.inputs.size() ? q.inputs[k] : -1, b = k < d.inputs.size() ? d.inputs[k] : -1;
    if (a == b) continue;
    if (a < 0 || b < 0 || !g.IsConstant(a) || !g.IsConstant(b) || g.values[a].dtype != g.values[b].dtype || g.values[a].constant->AsTensor().data != g.values[b].constant->AsTensor().data)
      return false;
  }
  return true;
}

}  // namespace

size_t FuseFakeQuantize(Graph* g) {
  return FuseEachNode(g, [g](size_t i, const GraphUses& u, std::vector<bool>* drop) {
    const Node& q = g->nodes[i];
    if (q.op_type != "QuantizeLinear" || q.inputs.empty() || q.inputs[0] < 0 || q.outputs.size() != 1 || q.outputs[0] < 0) return false;
    const Value& x = g->values[q.inputs[0]];
    if (x.kind != ValueKind::kTensor || x.dtype != "float32" || !x.shape_known || g->IsConstant(q.inputs[0])) return false;
    const std::string zero_type = q.inputs.size() > 2 && q.inputs[2] >= 0 ? g->values[q.inputs[2]].dtype : "uint8";
    if ((zero_type != "uint8" && zero_type != "int8") || !ScalarConstant(*g, q, 1, "float32", false) || !ScalarConstant(*g, q, 2, zero_type, true))
      return false;
    const int quantized = q.outputs[0];
    if (!u.Private(quantized)) return false;
    const size_t r = u.readers[quantized][0];
    const Node& d = g->nodes[r];
    if (d.op_type != "DequantizeLinear" || d.inputs.empty() || d.inputs[0] != quantized || d.outputs.size() != 1 || d.outputs[0] < 0 ||
        !SameParameters(*g, q, d))
      return false;
    Node fake = q;
    fake.name = q.name + "/fake_quantize";
    fake.op_type = "FakeQuantizeLinear";
    fake.outputs = {d.outputs[0]};
    ReplaceNodes(g, {static_cast<int>(i), static_cast<int>(r)}, std::move(fake), drop);
    return true;
  });
}

}  // namespace tilebank::engine::model
