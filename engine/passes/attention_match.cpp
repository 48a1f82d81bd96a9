#include "engine/passes/attention_match.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include "engine/ir/constant_slice.h"

namespace tilebank::engine::model {

namespace {

struct Context {
  const Graph& g;
  std::vector<std::vector<int>> readers;  // value -> nodes reading it
  std::vector<int> producer;              // value -> node writing it (-1: input or constant)
  std::vector<bool> is_output;

  explicit Context(const Graph& graph) : g(graph), readers(graph.values.size()), producer(graph.values.size(), -1), is_output(graph.values.size(), false) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (int v : g.nodes[i].inputs)
        if (v >= 0) readers[v].push_back(static_cast<int>(i));
      for (int v : g.nodes[i].outputs)
        if (v >= 0) producer[v] = static_cast<int>(i);
    }
    for (int v : g.outputs) is_output[v] = true;
  }
  // The node writing `v` when the block may take it in: `v` is read by one node only and is not a
  // model output, and it is a float32 value.
  int PrivateProducer(int v) const {
    if (v < 0 || is_output[v] || readers[v].size() != 1 || g.values[v].dtype != "float32" || !g.values[v].shape_known) return -1;
    return producer[v];
  }
  // The one reader of `v` when the block may take it in.
  int PrivateReader(int v) const {
    if (v < 0 || is_output[v] || readers[v].size() != 1) return -1;
    return readers[v][0];
  }
  std::optional<double> Scalar(int v) const {
    if (v < 0 || !g.IsConstant(v) || g.values[v].constant->size() != 1) return std::nullopt;
    return g.values[v].constant->At(0);
  }
};

bool IsReshapeLike(const std::string& t) { return t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze"; }
bool IsViewOp(const std::string& t) { return t == "Transpose" || t == "Slice" || t == "Expand" || IsReshapeLike(t); }

// Whether `v` repeats elements along a dimension (an Expand's broadcast: stride 0, extent above 1).
bool Broadcasts(const StridedView& v) {
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.strides[d] == 0 && v.shape[d] > 1) return true;
  return false;
}

std::vector<int64_t> TransposePerm(const Graph& g, const Node& n, size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  return g.AttrInts(n, "perm", perm);
}

// The view of node `n`'s output given `in`, the view of its data input; nullopt when it needs a copy.
std::optional<StridedView> ForwardView(const Graph& g, const Node& n, const StridedView& in) {
  const std::vector<int64_t>& out_shape = g.values[n.outputs[0]].shape;
  if (n.op_type == "Transpose") return TransposeView(in, TransposePerm(g, n, in.shape.size()));
  if (IsReshapeLike(n.op_type)) return ReshapeView(in, out_shape);
  if (n.op_type == "Expand") {  // numpy broadcasting of `in` to the output's shape: repeats read again (stride 0)
    if (out_shape.size() < in.shape.size()) return std::nullopt;
    StridedView view;
    view.offset = in.offset;
    view.shape = out_shape;
    view.strides.assign(out_shape.size(), 0);
    const size_t lead = out_shape.size() - in.shape.size();
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (in.shape[d] == out_shape[lead + d]) view.strides[lead + d] = in.strides[d];
      else if (in.shape[d] != 1) return std::nullopt;
    }
    return view;
  }
  const auto starts = ConstantSliceStarts(g, n, in.shape);
  if (!starts || out_shape.size() != starts->size()) return std::nullopt;
  StridedView view = in;
  for (size_t axis = 0; axis < starts->size(); ++axis) {
    auto sliced = SliceView(view, static_cast<int64_t>(axis), (*starts)[axis], out_shape[axis]);
    if (!sliced) return std::nullopt;
    view = *sliced;
  }
  return view.shape == out_shape ? std::optional<StridedView>(view) : std::nullopt;
}

// `n` as a product with a finite, non-zero constant of one element: {the other input, the factor}
// (a Div by c is a product with 1 / c); nullopt otherwise.
std::optional<std::pair<int, double>> ConstantScale(const Context& c, const Node& n) {
  if ((n.op_type != "Mul" && n.op_type != "Div") || n.inputs.size() != 2) return std::nullopt;
  const int side = c.Scalar(n.inputs[1]) ? 1 : (n.op_type == "Mul" && c.Scalar(n.inputs[0]) ? 0 : -1);
  if (side < 0) return std::nullopt;
  const double f = *c.Scalar(n.inputs[side]);
  if (f == 0 || !std::isfinite(f)) return std::nullopt;
  return std::make_pair(n.inputs[1 - side], n.op_type == "Mul" ? f : 1 / f);
}

// An operand of the block as a view into the memory of a value computed outside it.
struct Source {
  int base = -1;
  StridedView view;
  std::vector<int> nodes;  // the view nodes folded, from the base outward
  // Grouped-query attention's keys or values: a Reshape merged dimension group_axis of the view
  // with a broadcast one of extent `group` after it ([B, KV, G, T, D] -> [B, KV * G, T, D]), each
  // key/value head read by `group` query heads; the view keeps the KV heads. 1: no such merge.
  int64_t group = 1;
  int group_axis = -1;
};

// A reshape of `v` that merges dimension i with a broadcast dimension i + 1 (stride 0) and keeps
// every other: the view without dimension i + 1, and i and the broadcast extent; nullopt otherwise.
std::optional<std::pair<StridedView, std::pair<int, int64_t>>> GroupingReshape(const StridedView& v, const std::vector<int64_t>& out_shape) {
  if (out_shape.size() + 1 != v.shape.size()) return std::nullopt;
  for (size_t i = 0; i + 1 < v.shape.size(); ++i) {
    if (v.strides[i + 1] != 0 || v.shape[i + 1] < 2 || v.strides[i] == 0) continue;
    std::vector<int64_t> merged = v.shape;
    merged[i] *= merged[i + 1];
    merged.erase(merged.begin() + static_cast<int64_t>(i) + 1);
    if (merged != out_shape) continue;
    StridedView kept = v;
    kept.shape.erase(kept.shape.begin() + static_cast<int64_t>(i) + 1);
    kept.strides.erase(kept.strides.begin() + static_cast<int64_t>(i) + 1);
    return std::make_pair(kept, std::make_pair(static_cast<int>(i), v.shape[i + 1]));
  }
  return std::nullopt;
}

// Walks back from `v` through view nodes the block may take in, then builds the view from the base
// outward; a node that would need a copy ends the walk there (its output becomes the base). An
// Expand folds only where a grouping Reshape takes its repeats away again (grouped-query attention);
// otherwise the walk is made again with Expand ending it (`expand` false).
Source ViewOf(const Context& c, int v, bool expand = true) {
  std::vector<int> chain;  // from `v` back
  for (int at = v;;) {
    const int p = c.PrivateProducer(at);
    if (p < 0 || !IsViewOp(c.g.nodes[p].op_type) || (!expand && c.g.nodes[p].op_type == "Expand")) break;
    const int data = c.g.nodes[p].inputs[0];
    if (data < 0 || c.g.IsConstant(data) || c.g.values[data].dtype != "float32" || !c.g.values[data].shape_known) break;
    chain.push_back(p);
    at = data;
  }
  Source s;
  s.base = chain.empty() ? v : c.g.nodes[chain.back()].inputs[0];
  s.view = RowMajorView(c.g.values[s.base].shape);
  for (size_t k = chain.size(); k-- > 0;) {
    const Node& n = c.g.nodes[chain[k]];
    std::optional<StridedView> next;
    if (s.group == 1 || n.op_type == "Transpose") next = ForwardView(c.g, n, s.view);  // a grouped view only transposes
    if (next && s.group > 1) {
      const std::vector<int64_t> perm = TransposePerm(c.g, n, s.view.shape.size());
      s.group_axis = static_cast<int>(std::find(perm.begin(), perm.end(), s.group_axis) - perm.begin());
    }
    if (!next && s.group == 1 && IsReshapeLike(n.op_type)) {
      if (auto grouped = GroupingReshape(s.view, c.g.values[n.outputs[0]].shape)) {
        next = grouped->first;
        s.group_axis = grouped->second.first;
        s.group = grouped->second.second;
      }
    }
    if (!next) {  // start again past this node
      s.base = n.outputs[0];
      s.view = RowMajorView(c.g.values[s.base].shape);
      s.nodes.clear();
      s.group = 1, s.group_axis = -1;
      continue;
    }
    s.view = *next;
    s.nodes.push_back(chain[k]);
  }
  if (expand && Broadcasts(s.view)) return ViewOf(c, v, false);
  return s;
}

// `view` of rank 2 to 4 as rank 4 (leading extents of 1).
std::optional<StridedView> Rank4(StridedView view) {
  if (view.shape.size() < 2 || view.shape.size() > 4) return std::nullopt;
  while (view.shape.size() < 4) {
    view.shape.insert(view.shape.begin(), 1);
    view.strides.insert(view.strides.begin(), 0);
  }
  return view;
}

// `grouped`: keys and values may fold an Expand and a grouping Reshape (grouped-query attention).
std::optional<AttentionMatch> MatchAt(const Context& c, int context_matmul, bool grouped) {
  const Graph& g = c.g;
  const Node& m2 = g.nodes[context_matmul];
  if (m2.op_type != "MatMul" || m2.inputs.size() != 2 || m2.outputs.empty() || m2.outputs[0] < 0) return std::nullopt;
  AttentionMatch m;
  std::vector<int> block = {context_matmul};
  const int softmax = c.PrivateProducer(m2.inputs[0]);
  if (softmax < 0 || g.nodes[softmax].op_type != "Softmax") return std::nullopt;
  const std::vector<int64_t>& scores_shape = g.values[m2.inputs[0]].shape;
  if (scores_shape.size() < 2 || PositiveAxis(g.AttrInt(g.nodes[softmax], "axis", -1), scores_shape.size()) != static_cast<int64_t>(scores_shape.size()) - 1)
    return std::nullopt;
  block.push_back(softmax);
  // Back from the softmax: an optional mask Add, constant scales, the scores' MatMul.
  int at = g.nodes[softmax].inputs[0];
  int mask = -1;
  double scale = 1;
  int scores_matmul = -1;
  while (scores_matmul < 0) {
    const int p = c.PrivateProducer(at);
    if (p < 0) return std::nullopt;
    const Node& n = g.nodes[p];
    if (n.op_type == "MatMul") {
      scores_matmul = p;
    } else if (n.op_type == "Add" && mask < 0 && scale == 1 && n.inputs.size() == 2) {
      // The chain side is the one a Mul, Div or MatMul of the block writes.
      const int chain_side = [&] {
        for (int side : {0, 1}) {
          const int q = c.PrivateProducer(n.inputs[side]);
          if (q >= 0 && (g.nodes[q].op_type == "MatMul" || g.nodes[q].op_type == "Div" || g.nodes[q].op_type == "Mul")) return side;
        }
        return -1;
      }();
      if (chain_side < 0) return std::nullopt;
      mask = n.inputs[1 - chain_side];
      if (mask < 0 || g.values[mask].dtype != "float32" || !g.values[mask].shape_known || g.values[mask].shape.size() > scores_shape.size()) return std::nullopt;
      at = n.inputs[chain_side];
    } else if (const auto scaled = ConstantScale(c, n)) {
      at = scaled->first;
      scale *= scaled->second;
    } else {
      return std::nullopt;
    }
    block.push_back(p);
  }
  const Node& m1 = g.nodes[scores_matmul];
  if (m1.inputs.size() != 2) return std::nullopt;
  // Q may be scaled before the product (torch's MultiheadAttention).
  int query = m1.inputs[0];
  for (int p = c.PrivateProducer(query); p >= 0; p = c.PrivateProducer(query)) {
    const auto scaled = ConstantScale(c, g.nodes[p]);
    if (!scaled) break;
    query = scaled->first;
    scale *= scaled->second;
    block.push_back(p);
  }
  const Source q = ViewOf(c, query, false), k = ViewOf(c, m1.inputs[1], grouped), v = ViewOf(c, m2.inputs[1], grouped);
  for (const Source* s : {&q, &k, &v}) block.insert(block.end(), s->nodes.begin(), s->nodes.end());
  // Forward from the context: the view nodes that merge the heads again.
  std::vector<int> after;
  int output = m2.outputs[0];
  for (int r = c.PrivateReader(output); r >= 0 && IsViewOp(g.nodes[r].op_type) && g.nodes[r].op_type != "Slice" && !g.nodes[r].outputs.empty() &&
                                        g.values[g.nodes[r].outputs[0]].dtype == "float32" && g.values[g.nodes[r].outputs[0]].shape_known;
       r = c.PrivateReader(output)) {
    after.push_back(r);
    output = g.nodes[r].outputs[0];
  }
  // The context's view in the output's memory, back from the output; a node that would need a copy
  // ends the fold there.
  StridedView out = RowMajorView(g.values[output].shape);
  for (size_t i = after.size(); i-- > 0;) {
    const Node& n = g.nodes[after[i]];
    const std::vector<int64_t>& in_shape = g.values[n.inputs[0]].shape;
    auto prev = n.op_type == "Transpose" ? UntransposeView(out, TransposePerm(g, n, in_shape.size())) : ReshapeView(out, in_shape);
    if (!prev) {
      output = n.inputs[0];
      after.resize(i);
      out = RowMajorView(g.values[output].shape);
      i = after.size();
      continue;
    }
    out = *prev;
  }
  block.insert(block.end(), after.begin(), after.end());
  auto q4 = Rank4(q.view), k4 = Rank4(k.view), v4 = Rank4(v.view), o4 = Rank4(out);
  if (!q4 || !k4 || !v4 || !o4) return std::nullopt;
  // The scores' shape and the mask's broadcast over it, before any regrouping.
  const std::vector<int64_t> scores4 = {q4->shape[0], q4->shape[1], q4->shape[2], k4->shape[3]};
  std::optional<StridedView> mask_view;
  if (mask >= 0) {
    std::vector<int64_t> mask_shape = g.values[mask].shape;
    while (mask_shape.size() < 4) mask_shape.insert(mask_shape.begin(), 1);
    for (int d = 0; d < 4; ++d)
      if (mask_shape[d] != 1 && mask_shape[d] != scores4[d]) return std::nullopt;
    mask_view = StridedView{scores4, BroadcastStrides(mask_shape, scores4), 0};
  }
  // Grouped-query attention: keys and values of KV heads, each read by G query heads. The G heads
  // of a group become G times the queries of one head, [B, KV * G, Sq, D] -> [B, KV, G * Sq, D], where
  // the query, output and mask views allow it without a copy (one query per head: a decode step).
  if (k.group > 1 || v.group > 1) {
    const int64_t group = k.group;
    if (v.group != group || k.group_axis + 4 - static_cast<int>(k.view.shape.size()) != 1 || v.group_axis + 4 - static_cast<int>(v.view.shape.size()) != 1)
      return std::nullopt;
    if (k4->shape[1] * group != q4->shape[1] || q4->shape[1] % group != 0) return std::nullopt;
    auto regroup = [&](const StridedView& view) {
      return ReshapeView(view, {view.shape[0], view.shape[1] / group, group * view.shape[2], view.shape[3]});
    };
    q4 = regroup(*q4), o4 = regroup(*o4);
    if (mask_view) mask_view = regroup(*mask_view);
    if (!q4 || !o4 || (mask >= 0 && !mask_view)) return std::nullopt;
  }
  // No broadcasting between the operands' batch and head dimensions.
  for (int d = 0; d < 2; ++d)
    if (k4->shape[d] != q4->shape[d] || v4->shape[d] != q4->shape[d] || o4->shape[d] != q4->shape[d]) return std::nullopt;
  if (k4->shape[2] != q4->shape[3] || v4->shape[2] != k4->shape[3] || o4->shape[2] != q4->shape[2] || o4->shape[3] != v4->shape[3]) return std::nullopt;
  m.geometry.query = *q4;
  m.geometry.keys_transposed = *k4;
  m.geometry.values = *v4;
  m.geometry.output = *o4;
  m.geometry.output_shape = g.values[output].shape;
  m.geometry.scale = static_cast<float>(scale);
  m.inputs = {q.base, k.base, v.base};
  if (mask >= 0) {
    m.geometry.mask = mask_view;
    m.inputs.push_back(mask);
  }
  // The operands come from outside the block.
  std::sort(block.begin(), block.end());
  block.erase(std::unique(block.begin(), block.end()), block.end());
  std::set<int> written;
  for (int n : block) written.insert(g.nodes[n].outputs[0]);
  for (int in : m.inputs)
    if (written.count(in)) return std::nullopt;
  if (block.back() != c.producer[output]) return std::nullopt;
  m.scores_matmul = scores_matmul;
  m.nodes = std::move(block);
  m.output = output;
  return m;
}

}  // namespace

std::vector<AttentionMatch> FindAttentionBlocks(const Graph& g) {
  const Context c(g);
  std::vector<AttentionMatch> out;
  std::set<int> taken;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto m = MatchAt(c, static_cast<int>(i), true);
    if (!m) m = MatchAt(c, static_cast<int>(i), false);  // the grouped views would not fold: the repeats copied first
    if (!m || std::any_of(m->nodes.begin(), m->nodes.end(), [&](int n) { return taken.count(n) > 0; })) continue;
    taken.insert(m->nodes.begin(), m->nodes.end());
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace tilebank::engine::model
