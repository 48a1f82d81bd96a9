#include "engine/model/constant_fold.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "engine/model/basic_kernels.h"
#include "engine/ops/reference.h"

namespace tilebank::engine::model {

namespace {

// A constant built element by element from a flat index function, keeping `like`'s type.
ConstTensor Generate(ConstTensor::Type type, std::vector<int64_t> shape, const std::function<double(int64_t)>& at) {
  ConstTensor c;
  c.type = type;
  c.shape = std::move(shape);
  const int64_t n = c.size();
  if (type == ConstTensor::Type::kFloat) {
    c.floats.resize(n);
    for (int64_t i = 0; i < n; ++i) c.floats[i] = static_cast<float>(at(i));
  } else {
    c.ints.resize(n);
    for (int64_t i = 0; i < n; ++i) c.ints[i] = static_cast<int64_t>(at(i));
  }
  return c;
}

// Index into `in` (broadcast to `out_shape`) of flat output index `i`.
int64_t BroadcastIndex(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape, int64_t i) {
  const auto in_strides = RowMajorStrides(in_shape), out_strides = RowMajorStrides(out_shape);
  const size_t offset = out_shape.size() - in_shape.size();
  int64_t index = 0;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    const int64_t coord = (i / out_strides[d]) % out_shape[d];
    if (d >= offset && in_shape[d - offset] != 1) index += coord * in_strides[d - offset];
  }
  return index;
}

std::vector<int64_t> IntsOf(const ConstTensor& c) {
  std::vector<int64_t> v(c.size());
  for (int64_t i = 0; i < c.size(); ++i) v[i] = static_cast<int64_t>(c.At(i));
  return v;
}

using Folder = std::function<Result<ConstTensor>(const Graph&, const Node&, const std::vector<const ConstTensor*>&)>;

Result<ConstTensor> Binary(const Node& n, const std::vector<const ConstTensor*>& in, const std::function<double(double, double)>& f) {
  std::vector<int64_t> shape;
  if (!BroadcastShapes(in[0]->shape, in[1]->shape, &shape)) return Status::InvalidInput("node '" + n.name + "': inputs do not broadcast");
  const auto type = in[0]->type == ConstTensor::Type::kFloat || in[1]->type == ConstTensor::Type::kFloat ? ConstTensor::Type::kFloat : ConstTensor::Type::kInt;
  return Generate(type, shape, [&](int64_t i) {
    return f(in[0]->At(BroadcastIndex(in[0]->shape, shape, i)), in[1]->At(BroadcastIndex(in[1]->shape, shape, i)));
  });
}

const std::map<std::string, Folder>& Folders() {
  static const std::map<std::string, Folder> folders = {
      {"Add", [](const Graph&, const Node& n, const auto& in) { return Binary(n, in, [](double a, double b) { return a + b; }); }},
      {"Sub", [](const Graph&, const Node& n, const auto& in) { return Binary(n, in, [](double a, double b) { return a - b; }); }},
      {"Mul", [](const Graph&, const Node& n, const auto& in) { return Binary(n, in, [](double a, double b) { return a * b; }); }},
      {"Div", [](const Graph&, const Node& n, const auto& in) {
         const bool ints = in[0]->type == ConstTensor::Type::kInt && in[1]->type == ConstTensor::Type::kInt;
         return Binary(n, in, [ints](double a, double b) { return ints ? std::trunc(a / b) : a / b; });
       }},
      {"Equal", [](const Graph&, const Node& n, const auto& in) {
         auto r = Binary(n, in, [](double a, double b) { return a == b ? 1.0 : 0.0; });
         if (r.ok() && r->type == ConstTensor::Type::kFloat) *r = Generate(ConstTensor::Type::kInt, r->shape, [&](int64_t i) { return r->At(i); });
         return r;
       }},
      {"Sqrt", [](const Graph&, const Node&, const auto& in) { return Result<ConstTensor>(Generate(ConstTensor::Type::kFloat, in[0]->shape, [&](int64_t i) { return std::sqrt(in[0]->At(i)); })); }},
      {"Neg", [](const Graph&, const Node&, const auto& in) { return Result<ConstTensor>(Generate(in[0]->type, in[0]->shape, [&](int64_t i) { return -in[0]->At(i); })); }},
      {"Cast", [](const Graph& g, const Node& n, const auto& in) {
         const int64_t to = g.AttrInt(n, "to", 1);
         const bool to_float = to == 1 || to == 10 || to == 11 || to == 16;
         return Result<ConstTensor>(Generate(to_float ? ConstTensor::Type::kFloat : ConstTensor::Type::kInt, in[0]->shape,
                                             [&](int64_t i) { return to == 9 ? (in[0]->At(i) != 0) : to_float ? in[0]->At(i) : std::trunc(in[0]->At(i)); }));
       }},
      {"Reshape", [](const Graph& g, const Node& n, const auto& in) {
         ConstTensor c = *in[0];
         c.shape = g.values[n.outputs[0]].shape;
         return Result<ConstTensor>(c);
       }},
      {"Unsqueeze", [](const Graph& g, const Node& n, const auto& in) { ConstTensor c = *in[0]; c.shape = g.values[n.outputs[0]].shape; return Result<ConstTensor>(c); }},
      {"Squeeze", [](const Graph& g, const Node& n, const auto& in) { ConstTensor c = *in[0]; c.shape = g.values[n.outputs[0]].shape; return Result<ConstTensor>(c); }},
      {"Flatten", [](const Graph& g, const Node& n, const auto& in) { ConstTensor c = *in[0]; c.shape = g.values[n.outputs[0]].shape; return Result<ConstTensor>(c); }},
      {"ConstantOfShape", [](const Graph& g, const Node& n, const auto& in) {
         // `value` (a one-element tensor, float 0 when absent) was read at import into value / value_is_float.
         const bool is_float = !n.attrs.contains("value") || n.attrs.value("value_is_float", true);
         const double value = g.AttrFloat(n, "value", 0.f);
         return Result<ConstTensor>(Generate(is_float ? ConstTensor::Type::kFloat : ConstTensor::Type::kInt, IntsOf(*in[0]),
                                             [value](int64_t) { return value; }));
       }},
      {"Expand", [](const Graph& g, const Node& n, const auto& in) {
         const auto& shape = g.values[n.outputs[0]].shape;
         return Result<ConstTensor>(Generate(in[0]->type, shape, [&](int64_t i) { return in[0]->At(BroadcastIndex(in[0]->shape, shape, i)); }));
       }},
      {"Where", [](const Graph& g, const Node& n, const auto& in) {
         const auto& shape = g.values[n.outputs[0]].shape;
         const auto type = in[1]->type == ConstTensor::Type::kFloat || in[2]->type == ConstTensor::Type::kFloat ? ConstTensor::Type::kFloat : ConstTensor::Type::kInt;
         return Result<ConstTensor>(Generate(type, shape, [&](int64_t i) {
           return in[0]->At(BroadcastIndex(in[0]->shape, shape, i)) != 0 ? in[1]->At(BroadcastIndex(in[1]->shape, shape, i))
                                                                          : in[2]->At(BroadcastIndex(in[2]->shape, shape, i));
         }));
       }},
      {"Concat", [](const Graph& g, const Node& n, const auto& in) {
         const auto& shape = g.values[n.outputs[0]].shape;
         const int64_t axis = PositiveAxis(g.AttrInt(n, "axis", 0), shape.size());
         int64_t outer = 1, inner = 1;
         for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
         for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
         ConstTensor::Type type = ConstTensor::Type::kInt;
         for (const auto* t : in) if (t->type == ConstTensor::Type::kFloat) type = ConstTensor::Type::kFloat;
         std::vector<double> flat;
         for (int64_t o = 0; o < outer; ++o)
           for (const auto* t : in) {
             const int64_t chunk = (t->shape.empty() ? 1 : t->shape[axis]) * inner;
             for (int64_t k = 0; k < chunk; ++k) flat.push_back(t->At(o * chunk + k));
           }
         return Result<ConstTensor>(Generate(type, shape, [&](int64_t i) { return flat[i]; }));
       }},
      {"Gather", [](const Graph& g, const Node& n, const auto& in) {
         const auto& data = *in[0];
         const int64_t axis = PositiveAxis(g.AttrInt(n, "axis", 0), data.shape.size());
         const auto& shape = g.values[n.outputs[0]].shape;
         int64_t outer = 1, inner = 1;
         for (int64_t d = 0; d < axis; ++d) outer *= data.shape[d];
         for (size_t d = axis + 1; d < data.shape.size(); ++d) inner *= data.shape[d];
         const int64_t extent = data.shape[axis], count = in[1]->size();
         std::vector<int64_t> indices = IntsOf(*in[1]);
         for (int64_t& index : indices) {  // ONNX: each index in [-extent, extent)
           if (index < -extent || index >= extent)
             return Result<ConstTensor>(Status::InvalidInput("node '" + n.name + "' (Gather): index " + std::to_string(index) +
                                                             " is outside [" + std::to_string(-extent) + ", " + std::to_string(extent) + ")"));
           if (index < 0) index += extent;
         }
         return Result<ConstTensor>(Generate(data.type, shape, [&](int64_t i) {
           const int64_t o = i / (count * inner), k = (i / inner) % count, r = i % inner;
           return data.At((o * extent + indices[k]) * inner + r);
         }));
       }},
      {"Slice", [](const Graph& g, const Node& n, const auto& in) {
         const auto& data = *in[0];
         const auto& shape = g.values[n.outputs[0]].shape;
         const auto starts = IntsOf(*in[1]), ends = IntsOf(*in[2]);
         std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
         for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
         if (in.size() > 3 && in[3]) axes = IntsOf(*in[3]);
         if (in.size() > 4 && in[4]) steps = IntsOf(*in[4]);
         const size_t rank = data.shape.size();
         std::vector<int64_t> begin(rank, 0), step(rank, 1);
         for (size_t i = 0; i < axes.size(); ++i) {
           const int64_t a = PositiveAxis(axes[i], rank), dim = data.shape[a];
           int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
           s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
           begin[a] = s;
           step[a] = steps[i];
         }
         const auto out_strides = RowMajorStrides(shape), in_strides = RowMajorStrides(data.shape);
         return Result<ConstTensor>(Generate(data.type, shape, [&](int64_t i) {
           int64_t index = 0;
           for (size_t d = 0; d < rank; ++d) index += (begin[d] + ((i / out_strides[d]) % shape[d]) * step[d]) * in_strides[d];
           return data.At(index);
         }));
       }},
      {"Range", [](const Graph& g, const Node& n, const auto& in) {
         const double start = in[0]->At(0), delta = in[2]->At(0);
         return Result<ConstTensor>(Generate(in[0]->type, g.values[n.outputs[0]].shape, [&](int64_t i) { return start + i * delta; }));
       }},
      {"Transpose", [](const Graph& g, const Node& n, const auto& in) {
         const auto& data = *in[0];
         const size_t rank = data.shape.size();
         std::vector<int64_t> perm(rank);
         for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
         perm = g.AttrInts(n, "perm", perm);
         const auto& shape = g.values[n.outputs[0]].shape;
         const auto out_strides = RowMajorStrides(shape), in_strides = RowMajorStrides(data.shape);
         return Result<ConstTensor>(Generate(data.type, shape, [&](int64_t i) {
           int64_t index = 0;
           for (size_t d = 0; d < rank; ++d) index += ((i / out_strides[d]) % shape[d]) * in_strides[perm[d]];
           return data.At(index);
         }));
       }},
  };
  return folders;
}

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
    if (n.op_type == "Shape" && n.inputs[0] >= 0) {
      const auto& shape = g->values[n.inputs[0]].shape;
      const int64_t rank = static_cast<int64_t>(shape.size());
      int64_t start = g->AttrInt(n, "start", 0), end = g->AttrInt(n, "end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      std::vector<int64_t> dims(shape.begin() + start, shape.begin() + std::max(start, end));
      g->values[n.outputs[0]].constant = ConstTensor::Ints({static_cast<int64_t>(dims.size())}, dims);
      continue;
    }
    auto folder = Folders().find(n.op_type);
    bool all_constant = folder != Folders().end() && n.outputs.size() == 1;
    std::vector<const ConstTensor*> in;
    for (int v : n.inputs) {
      if (v >= 0 && !g->IsConstant(v)) all_constant = false;
      in.push_back(v >= 0 && g->IsConstant(v) ? &*g->values[v].constant : nullptr);
    }
    if (all_constant) {
      auto c = folder->second(*g, n, in);
      if (!c.ok()) return c.status();
      if (c->size() != Tensor::NumElements(g->values[n.outputs[0]].shape))
        return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + "): folded value disagrees with its inferred shape");
      g->values[n.outputs[0]].constant = std::move(c.value());
      continue;
    }
    kept.push_back(std::move(n));
  }
  g->nodes = std::move(kept);
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
