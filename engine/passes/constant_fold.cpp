#include "engine/passes/constant_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/backends/simd/unary_float_simd.h"
#include "engine/core/parallel_for.h"
#include "engine/passes/batch_norm_affine.h"
#include "engine/ir/constant_eval.h"
#include "engine/ir/graph_uses.h"
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

// Whether `bn` is a BatchNormalization reading `producer`'s output, which nothing else reads and
// which is not a model output: the two may become one node.
bool NormalizesOnly(const Graph& g, const Node& producer, const Node& bn, const std::map<int, int>& consumers) {
  if (bn.op_type != "BatchNormalization" || bn.inputs[0] != producer.outputs[0]) return false;
  return consumers.count(producer.outputs[0]) > 0 && consumers.at(producer.outputs[0]) == 1 && !IsGraphOutput(g, producer.outputs[0]);
}

// W' = W * gamma / sqrt(var + eps) per output channel, b' = (b - mean) * gamma / sqrt(var + eps) + beta.
bool FoldBatchNorm(Graph* g, Node* conv, const Node& bn, const std::map<int, int>& consumers) {
  if (conv->op_type != "Conv" || !NormalizesOnly(*g, *conv, bn, consumers)) return false;
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
  conv->inputs.resize(3);
  conv->inputs[1] = AddConstant(g, conv->name + ".folded_weight", std::move(nw));
  conv->inputs[2] = AddConstant(g, conv->name + ".folded_bias", ConstTensor::Floats({oc}, bias));
  conv->outputs[0] = bn.outputs[0];
  return true;
}

// A MatMul of a 2-D input and a constant [K, M] matrix, or a Gemm with a constant B and a constant
// (or absent) C of M values, followed by a BatchNormalization over its M columns (TabNet's and
// other tabular models' Linear + BatchNorm1d): B's columns scaled, the shift made Gemm's C
// (alpha kept, beta 1); a MatMul becomes that Gemm.
bool FoldBatchNormIntoGemm(Graph* g, Node* gemm, const Node& bn, const std::map<int, int>& consumers) {
  if ((gemm->op_type != "MatMul" && gemm->op_type != "Gemm") || !NormalizesOnly(*g, *gemm, bn, consumers)) return false;
  const Value& a = g->values[gemm->inputs[0]];
  if (!g->IsConstant(gemm->inputs[1]) || !a.shape_known || a.shape.size() != 2 || a.dtype != "float32") return false;
  const ConstTensor& w = *g->values[gemm->inputs[1]].constant;
  if (w.type != ConstTensor::Type::kFloat || w.shape.size() != 2) return false;
  const bool is_gemm = gemm->op_type == "Gemm";
  if (is_gemm && g->AttrInt(*gemm, "transA", 0) != 0) return false;
  const bool trans_b = is_gemm && g->AttrInt(*gemm, "transB", 0) != 0;
  const int64_t columns = trans_b ? w.shape[0] : w.shape[1], depth = trans_b ? w.shape[1] : w.shape[0];
  std::vector<float> bias(columns, 0.f);
  const bool has_c = is_gemm && gemm->inputs.size() > 2 && gemm->inputs[2] >= 0;
  if (has_c) {
    if (!g->IsConstant(gemm->inputs[2])) return false;
    const ConstTensor& c = *g->values[gemm->inputs[2]].constant;
    const float beta = g->AttrFloat(*gemm, "beta", 1.f);
    if (c.type != ConstTensor::Type::kFloat || (c.size() != columns && c.size() != 1) || (c.shape.size() == 2 && c.shape[0] != 1)) return false;
    const std::vector<float> values = c.AsTensor().data;
    for (int64_t m = 0; m < columns; ++m) bias[m] = beta * values[c.size() == 1 ? 0 : m];
  }
  auto affine = BatchNormAffine(*g, bn, columns);  // not constant, or another channel count: left as it is
  if (!affine.ok()) return false;
  ConstTensor nw = ConstTensor::Floats(w.shape, w.AsTensor().data);
  for (int64_t m = 0; m < columns; ++m) {
    const double k = affine->scale[m];
    for (int64_t d = 0; d < depth; ++d) {
      float& x = nw.floats[trans_b ? m * depth + d : d * columns + m];
      x = static_cast<float>(x * k);
    }
    bias[m] = static_cast<float>(bias[m] * k + affine->shift[m]);
  }
  if (!is_gemm) {
    gemm->op_type = "Gemm";
    gemm->attrs = nlohmann::json::object();
  }
  gemm->attrs["beta"] = 1.0;
  gemm->inputs.resize(3);
  gemm->inputs[1] = AddConstant(g, gemm->name + ".folded_weight", std::move(nw));
  gemm->inputs[2] = AddConstant(g, gemm->name + ".folded_bias", ConstTensor::Floats({columns}, bias));
  gemm->outputs[0] = bn.outputs[0];
  return true;
}

// A fake-quantized weight, QuantizeLinear(w) -> DequantizeLinear of float32 constant w to 8 bits with
// constant scales and zero points (per tensor or per axis), as quantization-aware training exports
// write them: the float constant it stands for, computed in one pass over w where the generic fold
// went through an 8-bit tensor held as int64 and conversions per element. The QuantizeLinear's
// output nothing else reads. Returns how many it folded.
int FoldFakeQuantizedWeights(Graph* g) {
  const GraphUses u = UsesOf(*g);
  // Element by element of a tensor of `shape` in order, the index into a scale or zero point of
  // `count` values along `axis` (counted, not divided: this runs once per weight).
  struct ChannelOf {
    int64_t inner = 1, extent = 1, step = 0, channel = 0;
    int64_t operator*() const { return channel; }
    void Next() {
      if (++step < inner) return;
      step = 0;
      if (++channel == extent) channel = 0;
    }
  };
  auto channel_of = [](const std::vector<int64_t>& shape, int64_t axis, int64_t count) {
    ChannelOf c;
    if (count == 1) return c;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) c.inner *= shape[d];
    c.extent = shape[axis];
    return c;
  };
  auto operands = [&](const Node& n, const std::vector<int64_t>& shape, std::vector<double>* scale, std::vector<int64_t>* zero, int64_t* axis) {
    if (n.inputs.size() < 2 || !g->IsConstant(n.inputs[1]) || (n.inputs.size() > 2 && n.inputs[2] >= 0 && !g->IsConstant(n.inputs[2]))) return false;
    const ConstTensor& s = *g->values[n.inputs[1]].constant;
    *axis = g->AttrInt(n, "axis", 1);
    if (*axis < 0) *axis += static_cast<int64_t>(shape.size());
    if (s.size() != 1 && (*axis < 0 || *axis >= static_cast<int64_t>(shape.size()) || shape[*axis] != s.size())) return false;
    scale->clear(), zero->assign(s.size(), 0);
    for (int64_t i = 0; i < s.size(); ++i) scale->push_back(s.At(i));
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const ConstTensor& z = *g->values[n.inputs[2]].constant;
      if (z.size() != s.size()) return false;
      for (int64_t i = 0; i < z.size(); ++i) (*zero)[i] = static_cast<int64_t>(z.At(i));
    }
    return true;
  };
  int folded = 0;
  std::set<size_t> dropped;
  for (Node& dq : g->nodes) {
    if (dq.op_type != "DequantizeLinear" || dq.inputs.empty() || dq.outputs.empty() || dq.outputs[0] < 0) continue;
    const int q8 = dq.inputs[0];
    if (q8 < 0 || u.producer[q8] < 0) continue;
    const Node& q = g->nodes[u.producer[q8]];
    const int w = q.inputs.empty() ? -1 : q.inputs[0];
    if (q.op_type != "QuantizeLinear" || !g->IsConstant(w) || g->values[w].dtype != "float32" || !u.Private(q8) ||
        static_cast<int64_t>(g->values[w].constant->floats.size()) != g->values[w].constant->size())
      continue;
    const std::string& type = g->values[q8].dtype;
    if (type != "int8" && type != "uint8") continue;
    const ConstTensor& weight = *g->values[w].constant;
    std::vector<double> q_scale, dq_scale;
    std::vector<int64_t> q_zero, dq_zero;
    int64_t q_axis = 1, dq_axis = 1;
    if (!operands(q, weight.shape, &q_scale, &q_zero, &q_axis) || !operands(dq, weight.shape, &dq_scale, &dq_zero, &dq_axis)) continue;
    const float low = type == "int8" ? -128 : 0, high = type == "int8" ? 127 : 255;
    auto q_channel = channel_of(weight.shape, q_axis, static_cast<int64_t>(q_scale.size()));
    auto dq_channel = channel_of(weight.shape, dq_axis, static_cast<int64_t>(dq_scale.size()));
    std::vector<float> values(static_cast<size_t>(weight.size()));
    // The usual export: one scale and zero point for both, per tensor or per channel. Each run of a
    // channel's elements is clamp(round(w / scale), low - zero, high - zero) * scale on Highway
    // (the same float32 values as the loop below: the levels are small integers), the runs on the
    // threads; ResNet-18's 11 M weights took about 90 ms element by element.
    if (q_scale == dq_scale && q_zero == dq_zero && q_channel.inner == dq_channel.inner && q_channel.extent == dq_channel.extent) {
      const int64_t run = q_channel.extent == 1 ? weight.size() : q_channel.inner, runs = run ? weight.size() / run : 0;
      const float* from = weight.floats.data();
      ParallelFor(runs, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, run)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t c = q_channel.extent == 1 ? 0 : r % q_channel.extent;
          const float zero = static_cast<float>(q_zero[c]);
          const UnaryFloatFunction f{UnaryFloatKind::kFakeQuantize, static_cast<float>(q_scale[c]), low - zero, high - zero};
          UnaryFloatSimd(f, from + r * run, values.data() + r * run, run);
        }
      });
    } else {
      // In float32, as the QuantizeLinear and DequantizeLinear kernels compute (x / scale rounded
      // to even, then (q - zero) * scale).
      for (int64_t i = 0; i < weight.size(); ++i, q_channel.Next(), dq_channel.Next()) {
        const int64_t qc = *q_channel, dc = *dq_channel;
        const float quotient = weight.floats[i] / static_cast<float>(q_scale[qc]);
        const float level = std::clamp(std::nearbyint(quotient) + static_cast<float>(q_zero[qc]), low, high);
        values[i] = (level - static_cast<float>(dq_zero[dc])) * static_cast<float>(dq_scale[dc]);
      }
    }
    Value& out = g->values[dq.outputs[0]];
    out.shape = weight.shape;
    out.dtype = "float32";
    out.constant = ConstTensor::Floats(weight.shape, std::move(values));
    dropped.insert(static_cast<size_t>(u.producer[q8]));
    dropped.insert(static_cast<size_t>(&dq - g->nodes.data()));
    ++folded;
  }
  if (folded) EraseNodes(g, [&](size_t i) { return dropped.count(i) > 0; });
  return folded;
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
  FoldFakeQuantizedWeights(g);
  // After the QDQ fusion (engine/passes/qdq_fusion.h): what it left of the QDQ structure runs in
  // float32, and a fake-quantized weight (QuantizeLinear -> DequantizeLinear of a float constant, as
  // torch.onnx exports quantization-aware training) becomes the float constant it stands for.
  auto folded = EvaluateConstantNodes(g, &shape_known, /*fold_quantization=*/true);
  if (!folded.ok()) return folded.status();
  TB_RETURN_IF_ERROR(LowerSplits(g));
  // BatchNormalization into the Conv, MatMul or Gemm before it.
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
    if (p != producer.end() && (FoldBatchNorm(g, &g->nodes[p->second], bn, consumers) || FoldBatchNormIntoGemm(g, &g->nodes[p->second], bn, consumers)))
      drop[i] = true;
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
