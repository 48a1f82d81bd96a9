#include "engine/passes/constant_fold.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "engine/passes/batch_norm_affine.h"
#include "engine/ir/constant_eval.h"
#include "engine/passes/split_lowering.h"

namespace tilebank::engine::model {

namespace {

// Makes every use of value `from` a use of `to`; graph outputs keep their own value.
void Redirect(Graph* g, int from, int to) {
  for (Node& n : g->nodes)
    for (int& v : n.inputs)
      if (v == from) v = to;
}

bool IsGraphOutput(const Graph& g, int v) { return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end(); }

// W' = W * gamma / sqrt(var + eps) per output channel, b' = (b - mean) * gamma / sqrt(var + eps) + beta.
bool FoldBatchNorm(Graph* g, Node* conv, const Node& bn, const std::map<int, int>& consumers) {
  if (conv->op_type != "Conv" || bn.op_type != "BatchNormalization" || bn.inputs[0] != conv->outputs[0]) return false;
  if (consumers.count(conv->outputs[0]) == 0 || consumers.at(conv->outputs[0]) != 1 || IsGraphOutput(*g, conv->outputs[0])) return false;
  if (!g->IsConstant(conv->inputs[1]) || (conv->inputs.size() > 2 && conv->inputs[2] >= 0 && !g->IsConstant(conv->inputs[2]))) return false;
  const ConstTensor& w = *g->values[conv->inputs[1]].constant;
  const int64_t oc = w.shape[0], per_channel = w.size() / oc;
  auto affine = BatchNormAffine(*g, bn, oc);  // not constant, or another channel count: left as it is
  if (!affine.ok()) return false;
  ConstTensor nw = ConstTensor::Floats(w.shape, w.AsTensor().data);
  std::vector<float> bias(oc, 0.f);
  if (conv->inputs.size() > 2 && conv->inputs[2] >= 0) bias = g->values[conv->inputs[2]].constant->AsTensor().data;
  for (int64_t c = 0; c < oc; ++c) {
    const double k = affine->scale[c];
    for (int64_t j = 0; j < per_channel; ++j) nw.floats[c * per_channel + j] = static_cast<float>(nw.floats[c * per_channel + j] * k);
    bias[c] = static_cast<float>(bias[c] * k + affine->shift[c]);
  }
  auto add_const = [&](const std::string& name, ConstTensor c) {
    Value v;
    v.name = name;
    v.shape = c.shape;
    v.constant = std::move(c);
    g->values.push_back(std::move(v));
    return static_cast<int>(g->values.size() - 1);
  };
  conv->inputs.resize(3);
  conv->inputs[1] = add_const(conv->name + ".folded_weight", std::move(nw));
  conv->inputs[2] = add_const(conv->name + ".folded_bias", ConstTensor::Floats({oc}, bias));
  conv->outputs[0] = bn.outputs[0];
  return true;
}

}  // namespace

Status FoldConstants(Graph* g) {
  std::vector<Node> kept;
  for (Node& n : g->nodes) {
    // Identity and Dropout (inference) pass their input through.
    if ((n.op_type == "Identity" || n.op_type == "Dropout") && n.inputs[0] >= 0 && !IsGraphOutput(*g, n.outputs[0])) {
      Redirect(g, n.outputs[0], n.inputs[0]);
      continue;
    }
    kept.push_back(std::move(n));
  }
  g->nodes = std::move(kept);
  std::vector<bool> shape_known;  // as the importer left them: some are known only per run
  for (const Value& v : g->values) shape_known.push_back(v.shape_known);
  // After the QDQ fusion (engine/passes/qdq_fusion.h): what it left of the QDQ structure runs in
  // float32, and a fake-quantized weight (QuantizeLinear -> DequantizeLinear of a float constant, as
  // torch.onnx exports quantization-aware training) becomes the float constant it stands for.
  auto folded = EvaluateConstantNodes(g, &shape_known, /*fold_quantization=*/true);
  if (!folded.ok()) return folded.status();
  TB_RETURN_IF_ERROR(LowerSplits(g));
  // BatchNormalization into the Conv before it.
  std::map<int, int> consumers;
  for (const Node& n : g->nodes)
    for (int v : n.inputs) ++consumers[v];
  std::map<int, size_t> producer;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    for (int v : g->nodes[i].outputs) producer[v] = i;
  std::vector<bool> drop(g->nodes.size(), false);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node& bn = g->nodes[i];
    if (bn.op_type != "BatchNormalization" || (bn.outputs.size() > 1 && bn.outputs[1] >= 0)) continue;
    auto p = producer.find(bn.inputs[0]);
    if (p != producer.end() && FoldBatchNorm(g, &g->nodes[p->second], bn, consumers)) drop[i] = true;
  }
  // Drop nodes whose outputs nothing reads (folding leaves some behind).
  std::set<int> live(g->outputs.begin(), g->outputs.end());
  for (size_t i = g->nodes.size(); i-- > 0;) {
    bool used = false;
    for (int v : g->nodes[i].outputs) used |= v >= 0 && live.count(v);
    if (!used || drop[i]) {
      drop[i] = true;
      continue;
    }
    for (int v : g->nodes[i].inputs) live.insert(v);
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (!drop[i]) nodes.push_back(std::move(g->nodes[i]));
  g->nodes = std::move(nodes);
  return Status::Ok();
}

}  // namespace tilebank::engine::model
