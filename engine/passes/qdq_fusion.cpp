#include "engine/passes/qdq_fusion.h"

#include "engine/ir/graph_uses.h"

#include <cmath>
#include <set>

namespace tilebank::engine::model {

namespace {

using Uses = GraphUses;

// `v`, or the constant an Identity chain passes on (PyTorch's export shares initializers through
// Identity nodes, which constant folding removes later).
int ThroughIdentity(const Graph& g, const Uses& u, int v) {
  while (v >= 0 && !g.IsConstant(v) && u.producer[v] >= 0 && g.nodes[u.producer[v]].op_type == "Identity" && !g.nodes[u.producer[v]].inputs.empty())
    v = g.nodes[u.producer[v]].inputs[0];
  return v;
}

bool Is8Bit(const std::string& dtype) { return dtype == "uint8" || dtype == "int8"; }

bool Private(const Uses& u, int v) { return u.Private(v); }

const Node* ProducerOf(const Graph& g, const Uses& u, int v, const char* op_type) {
  if (v < 0 || u.producer[v] < 0) return nullptr;
  const Node& n = g.nodes[u.producer[v]];
  return n.op_type == op_type ? &n : nullptr;
}

// A DequantizeLinear of a runtime 8-bit tensor with one scale and zero point (both constants).
struct Activation {
  int q = -1, scale = -1, zero = -1;
};
std::optional<Activation> ActivationOf(const Graph& g, const Uses& u, int v) {
  const Node* dq = ProducerOf(g, u, v, "DequantizeLinear");
  if (!dq || dq->inputs.size() < 2) return std::nullopt;
  Activation a{dq->inputs[0], ThroughIdentity(g, u, dq->inputs[1]), dq->inputs.size() > 2 ? ThroughIdentity(g, u, dq->inputs[2]) : -1};
  if (!Is8Bit(g.values[a.q].dtype) || g.IsConstant(a.q) || !g.IsConstant(a.scale) || g.values[a.scale].constant->size() != 1) return std::nullopt;
  if (a.zero >= 0 && (!g.IsConstant(a.zero) || g.values[a.zero].constant->size() != 1)) return std::nullopt;
  return a;
}

// Whether `a` was quantized with the scale `scale` and zero point `zero` (constants, one value each).
bool SameQuantization(const Graph& g, const Activation& a, int scale, int zero) {
  const auto value = [&](int v) { return v >= 0 ? g.values[v].constant->At(0) : 0.0; };
  if (value(a.scale) != value(scale) || value(a.zero) != value(zero)) return false;
  const std::string a_type = a.zero >= 0 ? g.values[a.zero].dtype : "uint8", y_type = zero >= 0 ? g.values[zero].dtype : "uint8";
  return a_type == y_type;
}

// A DequantizeLinear of int8 constant weights, symmetric, with one scale or one per slice of `axis`
// (of `channels` slices).
struct Weights {
  int q = -1, scale = -1, zero = -1;
};
std::optional<Weights> WeightsOf(const Graph& g, const Uses& u, int v, int64_t axis, int64_t channels) {
  const Node* dq = ProducerOf(g, u, v, "DequantizeLinear");
  if (!dq || dq->inputs.size() < 2) return std::nullopt;
  Weights w{ThroughIdentity(g, u, dq->inputs[0]), ThroughIdentity(g, u, dq->inputs[1]), dq->inputs.size() > 2 ? ThroughIdentity(g, u, dq->inputs[2]) : -1};
  if (!g.IsConstant(w.q) || g.values[w.q].dtype != "int8" || !g.IsConstant(w.scale)) return std::nullopt;
  const int64_t scales = g.values[w.scale].constant->size();
  const int64_t rank = static_cast<int64_t>(g.values[w.q].shape.size());
  if (scales != 1 && (scales != channels || PositiveAxis(g.AttrInt(*dq, "axis", 1), rank) != axis)) return std::nullopt;
  if (w.zero >= 0) {
    if (!g.IsConstant(w.zero)) return std::nullopt;
    const ConstTensor& z = *g.values[w.zero].constant;
    for (int64_t i = 0; i < z.size(); ++i)
      if (z.At(i) != 0) return std::nullopt;
  }
  return w;
}

// A Clip's bounds: its constant min and max inputs (opset 11+) or attributes (opset 6); nullopt
// when one is computed at run time.
std::optional<std::pair<float, float>> ClipBounds(const Graph& g, const Uses& u, const Node& clip) {
  float low = g.AttrFloat(clip, "min", -3.4028234e38f), high = g.AttrFloat(clip, "max", 3.4028234e38f);
  for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
    const int v = ThroughIdentity(g, u, clip.inputs[i]);
    if (v < 0) continue;
    if (!g.IsConstant(v) || g.values[v].constant->size() != 1) return std::nullopt;
    (i == 1 ? low : high) = static_cast<float>(g.values[v].constant->At(0));
  }
  return std::make_pair(low, high);
}

// The float bias `b` (one per output channel, or broadcast) in units of x_scale * w_scale[m].
std::optional<ConstTensor> Int32Bias(const Graph& g, int b, double x_scale, const ConstTensor& w_scale, int64_t channels) {
  if (b < 0) return ConstTensor::Ints({channels}, std::vector<int64_t>(static_cast<size_t>(channels), 0));
  if (!g.IsConstant(b) || g.values[b].dtype != "float32") return std::nullopt;
  const ConstTensor& bias = *g.values[b].constant;
  if (bias.size() != channels && bias.size() != 1) return std::nullopt;
  std::vector<int64_t> q(static_cast<size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) {
    const double unit = x_scale * w_scale.At(w_scale.size() == 1 ? 0 : m);
    const double v = std::nearbyint(bias.At(bias.size() == 1 ? 0 : m) / unit);
    if (!(std::fabs(v) < 2147483647.0)) return std::nullopt;
    q[m] = static_cast<int64_t>(v);
  }
  return ConstTensor::Ints({channels}, std::move(q));
}

// int8 activations handed from one QLinearConv to the next in channels-last order (oneDNN's int8
// convolutions read and write nhwc): a 4-D value written by a QLinearConv, QLinearAdd or 8-bit
// MaxPool whose readers are all QLinearConvs (as x), QLinearAdds or 8-bit MaxPools, never a graph
// output, and whose QLinearAdds and MaxPools take their operands and give their result in that
// order. Marked on the nodes as "x_nhwc" / "y_nhwc" (QLinearConv) and "nhwc" (QLinearAdd, MaxPool:
// operands and result); the value's shape stays NCHW in the graph.
void ChannelsLastInt8(Graph* g) {
  const Uses u = UsesOf(*g);
  // A MaxPool the fusion moved onto the 8-bit tensor, with one output and a window oneDNN takes.
  const auto pool8 = [&](const Node& n) {
    return n.op_type == "MaxPool" && n.outputs.size() == 1 && !n.inputs.empty() && n.inputs[0] >= 0 &&
           (g->values[n.inputs[0]].dtype == "uint8" || g->values[n.inputs[0]].dtype == "int8") && g->AttrInt(n, "ceil_mode", 0) == 0 &&
           g->AttrInt(n, "storage_order", 0) == 0 && [&] {
             const auto d = g->AttrInts(n, "dilations", {});
             return std::all_of(d.begin(), d.end(), [](int64_t v) { return v == 1; });
           }();
  };
  std::set<int> nhwc;
  for (const Node& n : g->nodes)
    if ((n.op_type == "QLinearConv" || n.op_type == "QLinearAdd" || pool8(n)) && !n.outputs.empty() && n.outputs[0] >= 0 &&
        g->values[n.outputs[0]].shape.size() == 4)
      nhwc.insert(n.outputs[0]);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = nhwc.begin(); it != nhwc.end();) {
      const int v = *it;
      bool keep = !u.outputs.count(v);
      for (size_t r : u.readers[v]) {
        const Node& reader = g->nodes[r];
        if (reader.op_type == "QLinearConv") keep = keep && reader.inputs[0] == v && reader.inputs[3] != v;
        else if (reader.op_type == "QLinearAdd") keep = keep && nhwc.count(reader.inputs[0]) && nhwc.count(reader.inputs[3]) && nhwc.count(reader.outputs[0]);
        else if (pool8(reader)) keep = keep && nhwc.count(reader.outputs[0]);
        else keep = false;
      }
      const Node& producer = g->nodes[u.producer[v]];
      if (producer.op_type == "QLinearAdd") keep = keep && nhwc.count(producer.inputs[0]) && nhwc.count(producer.inputs[3]);
      if (pool8(producer)) keep = keep && nhwc.count(producer.inputs[0]);
      if (keep) {
        ++it;
      } else {
        it = nhwc.erase(it);
        changed = true;
      }
    }
  }
  for (Node& n : g->nodes) {
    if (n.op_type == "QLinearConv") {
      if (nhwc.count(n.inputs[0])) n.attrs["x_nhwc"] = 1;
      if (nhwc.count(n.outputs[0])) n.attrs["y_nhwc"] = 1;
    } else if ((n.op_type == "QLinearAdd" || pool8(n)) && nhwc.count(n.outputs[0])) {
      n.attrs["nhwc"] = 1;
    }
  }
}

// Dynamic quantization as ONNX Runtime writes it: MatMulInteger(x_q, W_q, x_zero) -> Cast(float) ->
// Mul(x_scale) -> Mul(w_scale) [-> Add(bias)], x_q, x_scale and x_zero from one DynamicQuantizeLinear,
// W_q int8 [K, N] constant with zero point 0, w_scale constant (one or N), bias constant [N]: one
// DynamicQuantizedMatMul(x_q, W_q, x_zero, x_scale, w_scale[, bias]) node with a float32 result.
size_t FuseDynamicMatMuls(Graph* g) {
  size_t fused = 0;
  std::set<size_t> removed;
  for (size_t mi = 0; mi < g->nodes.size(); ++mi) {
    if (g->nodes[mi].op_type != "MatMulInteger") continue;  // before the uses: they are counted anew per candidate
    const Uses u = UsesOf(*g);
    const Node mm = g->nodes[mi];
    if (mm.inputs.size() < 3 || mm.outputs.empty()) continue;
    const Node* dq = ProducerOf(*g, u, mm.inputs[0], "DynamicQuantizeLinear");
    const int w = ThroughIdentity(*g, u, mm.inputs[1]);
    if (!dq || dq->outputs.size() < 3 || mm.inputs[2] != dq->outputs[2] || !g->IsConstant(w) || g->values[w].dtype != "int8" ||
        g->values[w].shape.size() != 2)
      continue;
    if (mm.inputs.size() > 3 && mm.inputs[3] >= 0) {
      const int wz = ThroughIdentity(*g, u, mm.inputs[3]);
      if (!g->IsConstant(wz)) continue;
      bool zero = true;
      for (int64_t i = 0; i < g->values[wz].constant->size(); ++i) zero = zero && g->values[wz].constant->At(i) == 0;
      if (!zero) continue;
    }
    const int64_t N = g->values[w].shape[1];
    std::vector<size_t> chain;
    int v = mm.outputs[0];
    auto next = [&](const char* op) -> const Node* {
      if (!Private(u, v)) return nullptr;
      const Node& r = g->nodes[u.readers[v][0]];
      return r.op_type == op ? &r : nullptr;
    };
    const Node* cast = next("Cast");
    if (!cast || g->AttrInt(*cast, "to", 0) != 1) continue;
    chain.push_back(u.readers[v][0]);
    v = cast->outputs[0];
    const Node* mul1 = next("Mul");
    if (!mul1) continue;
    const int other1 = mul1->inputs[0] == v ? mul1->inputs[1] : mul1->inputs[0];
    if (other1 != dq->outputs[1]) continue;
    chain.push_back(u.readers[v][0]);
    v = mul1->outputs[0];
    const Node* mul2 = next("Mul");
    if (!mul2) continue;
    const int ws = ThroughIdentity(*g, u, mul2->inputs[0] == v ? mul2->inputs[1] : mul2->inputs[0]);
    if (!g->IsConstant(ws) || (g->values[ws].constant->size() != 1 && g->values[ws].constant->size() != N)) continue;
    chain.push_back(u.readers[v][0]);
    v = mul2->outputs[0];
    int bias = -1;
    if (const Node* add = next("Add")) {
      const int b = ThroughIdentity(*g, u, add->inputs[0] == v ? add->inputs[1] : add->inputs[0]);
      if (g->IsConstant(b) && g->values[b].dtype == "float32" && g->values[b].constant->size() == N) {
        bias = b;
        chain.push_back(u.readers[v][0]);
        v = add->outputs[0];
      }
    }
    Node f;
    f.name = mm.name;
    f.op_type = "DynamicQuantizedMatMul";
    f.inputs = {mm.inputs[0], w, mm.inputs[2], dq->outputs[1], ws};
    if (bias >= 0) f.inputs.push_back(bias);
    f.outputs = {v};
    const size_t last = chain.back();
    g->nodes[last] = std::move(f);
    removed.insert(mi);
    for (size_t i = 0; i + 1 < chain.size(); ++i) removed.insert(chain[i]);
    for (size_t r : removed) g->nodes[r].inputs.clear(), g->nodes[r].outputs.clear();
    ++fused;
  }
  EraseNodes(g, [&](size_t i) { return removed.count(i) > 0; });
  return fused;
}

}  // namespace

Result<size_t> FuseQdq(Graph* g) {
  const size_t dynamic = FuseDynamicMatMuls(g);
  size_t fused = 0;
  std::set<size_t> removed;
  for (size_t qi = 0; qi < g->nodes.size(); ++qi) {
    if (g->nodes[qi].op_type != "QuantizeLinear") continue;  // before the uses: they are counted anew per candidate
    const Uses u = UsesOf(*g);  // the graph changes as nodes fuse
    const Node q = g->nodes[qi];
    if (q.inputs.size() < 3 || !g->IsConstant(q.inputs[1]) || g->values[q.inputs[1]].constant->size() != 1 ||
        !g->IsConstant(q.inputs[2]) || g->values[q.inputs[2]].constant->size() != 1 || !Is8Bit(g->values[q.inputs[2]].dtype))
      continue;
    std::vector<size_t> swallowed;
    int v = q.inputs[0];
    bool relu = false;
    std::optional<std::pair<float, float>> clip;  // a Clip's bounds (ReLU6)
    if (const Node* r = ProducerOf(*g, u, v, "Relu"); r && Private(u, v)) {
      relu = true;
      swallowed.push_back(u.producer[v]);
      v = r->inputs[0];
    } else if (const Node* c = ProducerOf(*g, u, v, "Clip"); c && Private(u, v) && !c->inputs.empty()) {
      clip = ClipBounds(*g, u, *c);
      if (clip) {
        swallowed.push_back(u.producer[v]);
        v = c->inputs[0];
      }
    }
    int bias = -1;
    if (const Node* add = ProducerOf(*g, u, v, "Add"); add && Private(u, v) && add->inputs.size() == 2) {
      const int c = g->IsConstant(ThroughIdentity(*g, u, add->inputs[1])) ? 1 : g->IsConstant(ThroughIdentity(*g, u, add->inputs[0])) ? 0 : -1;
      if (c >= 0 && ProducerOf(*g, u, add->inputs[1 - c], "MatMul")) {
        swallowed.push_back(u.producer[v]);
        bias = ThroughIdentity(*g, u, add->inputs[c]);
        v = add->inputs[1 - c];
      }
    }
    if (!Private(u, v) || u.producer[v] < 0) continue;
    const size_t op_index = static_cast<size_t>(u.producer[v]);
    const Node& op = g->nodes[op_index];
    Node fused_node;
    fused_node.name = op.name;
    fused_node.outputs = q.outputs;
    const int y_scale = q.inputs[1], y_zero = q.inputs[2];
    if (op.op_type == "MaxPool" && !relu && !clip && bias < 0 && op.outputs.size() == 1 && !op.inputs.empty()) {
      // Quantization is monotonic: the max of the dequantized values, requantized with the same
      // scale and zero point, is the max of the quantized ones. The pool runs on the 8-bit tensor.
      auto x = ActivationOf(*g, u, op.inputs[0]);
      if (!x || !SameQuantization(*g, *x, y_scale, y_zero)) continue;
      fused_node.op_type = "MaxPool";
      fused_node.attrs = op.attrs;
      fused_node.inputs = {x->q};
    } else if (op.op_type == "Add" && bias < 0 && !clip && op.inputs.size() == 2) {
      // A residual sum of two dequantized tensors of one shape, requantized: one pass over 8-bit data.
      auto a = ActivationOf(*g, u, op.inputs[0]);
      auto b = ActivationOf(*g, u, op.inputs[1]);
      if (!a || !b || g->values[a->q].shape != g->values[b->q].shape || g->values[a->q].shape != g->values[v].shape) continue;
      fused_node.op_type = "QLinearAdd";
      fused_node.inputs = {a->q, a->scale, a->zero, b->q, b->scale, b->zero, y_scale, y_zero};
    } else if (op.op_type == "Conv" && op.inputs.size() >= 2 && bias < 0) {
      const int64_t M = g->values[op.inputs[1]].shape.empty() ? 0 : g->values[op.inputs[1]].shape[0];
      auto x = ActivationOf(*g, u, op.inputs[0]);
      auto w = WeightsOf(*g, u, op.inputs[1], 0, M);
      if (!x || !w) continue;
      auto b = Int32Bias(*g, op.inputs.size() > 2 ? ThroughIdentity(*g, u, op.inputs[2]) : -1, g->values[x->scale].constant->At(0), *g->values[w->scale].constant, M);
      if (!b) continue;
      fused_node.op_type = "QLinearConv";
      fused_node.attrs = op.attrs;
      const int b_value = AddConstant(g, op.name + "/int32_bias", std::move(*b), "int32");
      fused_node.inputs = {x->q, x->scale, x->zero, w->q, w->scale, w->zero, y_scale, y_zero, b_value};
    } else if ((op.op_type == "MatMul" || op.op_type == "Gemm") && op.inputs.size() >= 2) {
      const bool gemm = op.op_type == "Gemm";
      if (gemm && (g->AttrFloat(op, "alpha", 1) != 1 || g->AttrFloat(op, "beta", 1) != 1 || g->AttrInt(op, "transA", 0) != 0 || bias >= 0)) continue;
      const bool trans_b = gemm && g->AttrInt(op, "transB", 0) != 0;
      const std::vector<int64_t>& w_shape = g->values[op.inputs[1]].shape;
      if (w_shape.size() != 2) continue;
      const int64_t N = trans_b ? w_shape[0] : w_shape[1], K = trans_b ? w_shape[1] : w_shape[0];
      auto x = ActivationOf(*g, u, op.inputs[0]);
      auto w = WeightsOf(*g, u, op.inputs[1], trans_b ? 0 : 1, N);
      if (!x || !w) continue;
      if (gemm && op.inputs.size() > 2) bias = ThroughIdentity(*g, u, op.inputs[2]);
      auto b = Int32Bias(*g, bias, g->values[x->scale].constant->At(0), *g->values[w->scale].constant, N);
      if (!b) continue;
      int w_q = w->q;
      if (trans_b) {  // [N, K] -> [K, N]
        const ConstTensor& t = *g->values[w->q].constant;
        std::vector<int64_t> kn(static_cast<size_t>(K * N));
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < K; ++k) kn[k * N + n] = static_cast<int64_t>(t.At(n * K + k));
        w_q = AddConstant(g, op.name + "/int8_weights_kn", ConstTensor::Ints({K, N}, std::move(kn)), "int8");
      }
      fused_node.op_type = "QLinearMatMul";
      const int b_value = AddConstant(g, op.name + "/int32_bias", std::move(*b), "int32");
      fused_node.inputs = {x->q, x->scale, x->zero, w_q, w->scale, w->zero, y_scale, y_zero, b_value};
    } else {
      continue;
    }
    if (relu) fused_node.attrs["relu"] = 1;
    if (clip) fused_node.attrs["clip_low"] = clip->first, fused_node.attrs["clip_high"] = clip->second;
    g->nodes[qi] = std::move(fused_node);
    removed.insert(op_index);
    removed.insert(swallowed.begin(), swallowed.end());
    ++fused;
    // The swallowed nodes' outputs are read by nothing now: their readers list drops them below.
    for (size_t r : removed) g->nodes[r].inputs.clear(), g->nodes[r].outputs.clear();
  }
  if (!fused) return dynamic;
  // Dequantizations nothing reads any more (the weights', an activation read only by a fused node).
  for (bool again = true; again;) {
    again = false;
    const Uses u = UsesOf(*g);
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      if (removed.count(i) || g->nodes[i].op_type != "DequantizeLinear") continue;
      bool read = false;
      for (int o : g->nodes[i].outputs) read = read || (o >= 0 && (!u.readers[o].empty() || u.outputs.count(o)));
      if (!read) {
        removed.insert(i);
        g->nodes[i].inputs.clear(), g->nodes[i].outputs.clear();
        again = true;
      }
    }
  }
  EraseNodes(g, [&](size_t i) { return removed.count(i) > 0; });
  ChannelsLastInt8(g);
  return fused + dynamic;
}

}  // namespace tilebank::engine::model
