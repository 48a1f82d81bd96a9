#include "engine/passes/parallel_conv_merge.h"

#include <optional>
#include <string>
#include <vector>

#include "engine/ir/graph_uses.h"
#include "engine/passes/batch_norm_affine.h"

namespace tilebank::engine::model {
namespace {

// A convolution this pass may rewrite: float32 over a known NCHW-like shape, constant float
// weights and bias (or none), explicit pads.
struct ConvView {
  int node = -1;
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins, then ends
  int64_t group = 1;
};

std::optional<ConvView> ViewConv(const Graph& g, int node) {
  if (node < 0) return std::nullopt;
  const Node& n = g.nodes[node];
  if (n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) return std::nullopt;
  if (!g.IsConstant(n.inputs[1]) || g.values[n.inputs[1]].constant->type != ConstTensor::Type::kFloat) return std::nullopt;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && (!g.IsConstant(n.inputs[2]) || g.values[n.inputs[2]].constant->type != ConstTensor::Type::kFloat))
    return std::nullopt;
  const Value& x = g.values[n.inputs[0]];
  const ConstTensor& w = *g.values[n.inputs[1]].constant;
  if (!x.shape_known || x.dtype != "float32" || x.kind != ValueKind::kTensor || x.shape.size() < 3 || w.shape.size() != x.shape.size()) return std::nullopt;
  if (g.AttrString(n, "auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
  const size_t spatial = x.shape.size() - 2;
  ConvView v;
  v.node = node;
  v.kernel.assign(w.shape.begin() + 2, w.shape.end());
  v.strides = g.AttrInts(n, "strides", std::vector<int64_t>(spatial, 1));
  v.dilations = g.AttrInts(n, "dilations", std::vector<int64_t>(spatial, 1));
  v.pads = g.AttrInts(n, "pads", std::vector<int64_t>(2 * spatial, 0));
  v.group = g.AttrInt(n, "group", 1);
  if (v.strides.size() != spatial || v.dilations.size() != spatial || v.pads.size() != 2 * spatial) return std::nullopt;
  return v;
}

std::vector<float> BiasOf(const Graph& g, const Node& conv, int64_t channels) {
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) return g.values[conv.inputs[2]].constant->AsTensor().data;
  return std::vector<float>(static_cast<size_t>(channels), 0.f);
}

// `big`'s weights and bias set to `weights` and `bias`, and its output to `output`.
void Rewrite(Graph* g, int big, std::vector<float> weights, std::vector<float> bias, int output) {
  Node& conv = g->nodes[big];
  const std::vector<int64_t> shape = g->values[conv.inputs[1]].constant->shape;
  conv.inputs.resize(3);
  conv.inputs[1] = AddConstant(g, conv.name + ".merged_weight", ConstTensor::Floats(shape, std::move(weights)));
  conv.inputs[2] = AddConstant(g, conv.name + ".merged_bias", ConstTensor::Floats({shape[0]}, std::move(bias)));
  conv.outputs[0] = output;
}

// Add(conv a of x, conv b of x) -> a with b's filter centred in its own, where b's fits.
bool MergeTwoConvs(Graph* g, const GraphUses& u, const Node& add, const ConvView& a, const ConvView& b) {
  const Node &na = g->nodes[a.node], &nb = g->nodes[b.node];
  if (na.inputs[0] != nb.inputs[0] || a.group != b.group || a.strides != b.strides || a.dilations != b.dilations) return false;
  if (!u.Private(na.outputs[0]) || !u.Private(nb.outputs[0])) return false;
  const ConstTensor &wa = *g->values[na.inputs[1]].constant, &wb = *g->values[nb.inputs[1]].constant;
  if (wa.shape[0] != wb.shape[0] || wa.shape[1] != wb.shape[1]) return false;
  const size_t spatial = a.kernel.size();
  std::vector<int64_t> offset(spatial);  // where b's filter starts in a's
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t diff = a.kernel[d] - b.kernel[d];
    if (diff < 0 || diff % 2) return false;
    offset[d] = diff / 2;
    const int64_t shift = offset[d] * a.dilations[d];
    if (a.pads[d] - b.pads[d] != shift || a.pads[spatial + d] - b.pads[spatial + d] != shift) return false;
  }
  std::vector<float> weights = wa.AsTensor().data, bias = BiasOf(*g, na, wa.shape[0]);
  const std::vector<float> small = wb.AsTensor().data, small_bias = BiasOf(*g, nb, wb.shape[0]);
  const int64_t filters = wa.shape[0] * wa.shape[1], big_taps = wa.size() / filters, small_taps = wb.size() / filters;
  for (int64_t f = 0; f < filters; ++f)
    for (int64_t t = 0; t < small_taps; ++t) {
      // Tap t of b (row-major over its spatial dims) at its place in a's filter.
      int64_t rest = t, at = 0, stride_big = 1;
      std::vector<int64_t> index(spatial);
      for (size_t d = spatial; d-- > 0;) index[d] = rest % b.kernel[d], rest /= b.kernel[d];
      for (size_t d = spatial; d-- > 0;) at += (index[d] + offset[d]) * stride_big, stride_big *= a.kernel[d];
      weights[static_cast<size_t>(f * big_taps + at)] += small[static_cast<size_t>(f * small_taps + t)];
    }
  for (size_t c = 0; c < bias.size(); ++c) bias[c] += small_bias[c];
  Rewrite(g, a.node, std::move(weights), std::move(bias), add.outputs[0]);
  return true;
}

// Add(conv a of x, scale * x + shift) -> a with the identity in its
// filter's centre, where a keeps x's shape and maps channel c to channel c.
bool MergeIdentity(Graph* g, const GraphUses& u, const Node& add, const ConvView& a, const std::vector<double>& scale, const std::vector<double>& shift) {
  const Node& na = g->nodes[a.node];
  const Value &x = g->values[na.inputs[0]], &y = g->values[na.outputs[0]];
  if (!u.Private(na.outputs[0]) || !y.shape_known || y.shape != x.shape) return false;
  const ConstTensor& w = *g->values[na.inputs[1]].constant;
  const int64_t channels = x.shape[1], per_group = channels / a.group;
  if (w.shape[0] != channels || a.group < 1 || channels % a.group || w.shape[1] != per_group) return false;
  const size_t spatial = a.kernel.size();
  int64_t centre = 0, stride = 1;
  for (size_t d = spatial; d-- > 0;) {
    const int64_t half = (a.kernel[d] - 1) / 2;
    if (a.kernel[d] % 2 == 0 || a.strides[d] != 1 || a.pads[d] != half * a.dilations[d] || a.pads[spatial + d] != half * a.dilations[d]) return false;
    centre += half * stride, stride *= a.kernel[d];
  }
  std::vector<float> weights = w.AsTensor().data, bias = BiasOf(*g, na, channels);
  const int64_t taps = stride;
  for (int64_t c = 0; c < channels; ++c) {
    // Output channel c reads input channel c as its (c % per_group)-th of its group's.
    weights[static_cast<size_t>((c * per_group + c % per_group) * taps + centre)] += static_cast<float>(scale[static_cast<size_t>(c)]);
    bias[static_cast<size_t>(c)] += static_cast<float>(shift[static_cast<size_t>(c)]);
  }
  Rewrite(g, a.node, std::move(weights), std::move(bias), add.outputs[0]);
  return true;
}

// One Add folded into a convolution of its inputs, or false.
bool MergeAt(Graph* g, const GraphUses& u, size_t i, std::vector<bool>* drop) {
  const Node add = g->nodes[i];
  if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] < 0 || add.inputs[0] < 0 || add.inputs[1] < 0) return false;
  const Value &l = g->values[add.inputs[0]], &r = g->values[add.inputs[1]], &out = g->values[add.outputs[0]];
  if (!l.shape_known || !r.shape_known || l.shape != r.shape || !out.shape_known || out.shape != l.shape || l.dtype != "float32") return false;
  for (int side = 0; side < 2; ++side) {
    const int mine = add.inputs[side], other = add.inputs[1 - side];
    const auto a = ViewConv(*g, u.producer[mine]);
    if (!a) continue;
    const int x = g->nodes[a->node].inputs[0];
    if (const auto b = ViewConv(*g, u.producer[other]); b && MergeTwoConvs(g, u, add, *a, *b)) {
      (*drop)[i] = (*drop)[static_cast<size_t>(b->node)] = true;
      return true;
    }
    // x + conv(x) stays: the convolution adds its residual as it writes, at no cost.
    const int bn_node = u.producer[other];
    if (bn_node < 0 || !u.Private(other)) continue;
    const Node& bn = g->nodes[bn_node];
    if (!InferenceBatchNorm(*g, bn) || bn.inputs[0] != x) continue;
    auto affine = BatchNormAffine(*g, bn, l.shape[1]);
    if (!affine.ok()) continue;
    if (MergeIdentity(g, u, add, *a, affine->scale, affine->shift)) {
      (*drop)[i] = (*drop)[static_cast<size_t>(bn_node)] = true;
      return true;
    }
  }
  return false;
}

}  // namespace

size_t MergeParallelConvs(Graph* g) {
  size_t merged = 0;
  for (;;) {  // a block's third branch merges once the first two have
    const GraphUses u = UsesOf(*g);
    std::vector<bool> drop(g->nodes.size(), false);
    size_t now = 0;
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      if (drop[i] || g->nodes[i].op_type != "Add") continue;
      // Nodes this one reads from must not have been rewritten in this sweep (their uses changed).
      bool touched = false;
      for (int v : g->nodes[i].inputs) touched |= v >= 0 && u.producer[v] >= 0 && drop[static_cast<size_t>(u.producer[v])];
      if (!touched && MergeAt(g, u, i, &drop)) ++now;
    }
    if (!now) return merged;
    EraseNodes(g, [&](size_t i) { return drop[i]; });
    merged += now;
  }
}

}  // namespace tilebank::engine::model
