#include "engine/backends/onednn/attention_kernel.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {

using dnnl::memory;

namespace {

std::optional<int64_t> IntKnob(const Policy& policy, const char* name) {
  for (const Knob& k : policy)
    if (k.name == name)
      if (const auto* v = std::get_if<int64_t>(&k.value)) return *v;
  return std::nullopt;
}

Policy TilePolicy(int64_t head_tile, int64_t query_tile) { return {{"head_tile", head_tile}, {"query_tile", query_tile}}; }

// A oneDNN descriptor of `dims` read with `strides` (extent-1 dimensions get a stride oneDNN accepts).
memory::desc ViewDesc(const memory::dims& dims, std::vector<int64_t> strides) {
  int64_t widest = 1;
  for (size_t d = 0; d < dims.size(); ++d) widest = std::max(widest, strides[d] * dims[d]);
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] == 1) strides[d] = widest;
  return memory::desc(dims, memory::data_type::f32, memory::dims(strides.begin(), strides.end()));
}

class FusedAttention : public Kernel {
 public:
  FusedAttention(AttentionGeometry g, int64_t head_tile, int64_t query_tile) : g_(std::move(g)), head_tile_(head_tile), query_tile_(query_tile) {}

  Status Prepare(const std::vector<const Tensor*>& inputs) override {
    if (inputs.size() != (g_.mask ? 4u : 3u)) return Status::InvalidInput("attention: takes Q, K, V" + std::string(g_.mask ? " and the mask" : ""));
    std::vector<std::vector<int64_t>> shapes;
    std::vector<const Tensor*> none(inputs.size(), nullptr);
    for (const Tensor* t : inputs) shapes.push_back(t->shape);
    auto bound = BindDirect(shapes, none);
    if (!bound.ok()) return bound.status();
    prepared_ = inputs;
    return Status::Ok();
  }
  Status Run() override {
    result_ = Tensor(g_.output_shape);
    std::vector<const float*> in;
    for (const Tensor* t : prepared_) in.push_back(t->data.data());
    return RunDirect(in, result_.data.data());
  }
  Status Fetch(Tensor* output) override {
    *output = result_;
    return Status::Ok();
  }

  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    return CatchOneDnnErrors([&]() -> Result<bool> {
      if (shapes.size() != (g_.mask ? 4u : 3u)) return Status::InvalidInput("attention: takes Q, K, V" + std::string(g_.mask ? " and the mask" : ""));
      if (g_.mask && constants.size() > 3 && constants[3]) mask_constant_ = constants[3]->data;
      stream_ = dnnl::stream(OneDnnCpuEngine());
      for (int64_t h : {head_tile_, g_.heads() % head_tile_})
        for (int64_t q : {query_tile_, g_.queries() % query_tile_})
          if (h > 0 && q > 0 && !passes_.count({h, q})) passes_[{h, q}] = MakePass(h, q);
      return true;
    });
  }

  Status RunDirect(const std::vector<const float*>& inputs, float* output) override {
    return CatchOneDnnErrors([&]() -> Status {
      const float* mask = g_.mask ? (mask_constant_.empty() ? inputs[3] : mask_constant_.data()) : nullptr;
      for (int64_t h0 = 0; h0 < g_.heads(); h0 += head_tile_)
        for (int64_t q0 = 0; q0 < g_.queries(); q0 += query_tile_) {
          const int64_t h = std::min(head_tile_, g_.heads() - h0), q = std::min(query_tile_, g_.queries() - q0);
          RunPass(passes_.at({h, q}), inputs, mask, output, h0, q0);
        }
      return Status::Ok();
    });
  }

 private:
  struct Pass {
    int64_t heads = 0, queries = 0;
    dnnl::matmul scores, context;
    dnnl::softmax_forward softmax;
    memory::desc query_md, keys_md, scores_md, values_md, output_md;
    std::vector<float> scratch;
  };

  Pass MakePass(int64_t heads, int64_t queries) {
    Pass p;
    p.heads = heads;
    p.queries = queries;
    const int64_t b = g_.batch(), d = g_.query.shape[3], keys = g_.keys(), dv = g_.values.shape[3];
    p.query_md = ViewDesc({b, heads, queries, d}, g_.query.strides);
    p.keys_md = ViewDesc({b, heads, d, keys}, g_.keys_transposed.strides);
    p.scores_md = memory::desc({b, heads, queries, keys}, memory::data_type::f32, memory::format_tag::abcd);
    p.values_md = ViewDesc({b, heads, keys, dv}, g_.values.strides);
    p.output_md = ViewDesc({b, heads, queries, dv}, g_.output.strides);
    dnnl::primitive_attr scaled;
    scaled.set_output_scales(0, {g_.scale});
    auto& engine = OneDnnCpuEngine();
    p.scores = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(p.query_md, p.keys_md, p.scores_md), scaled, engine));
    p.softmax = dnnl::softmax_forward(
        dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, p.scores_md, 3), engine));
    p.context = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(p.scores_md, p.values_md, p.output_md), engine));
    p.scratch.assign(static_cast<size_t>(b * heads * queries * keys), 0.f);
    return p;
  }

  void RunPass(Pass& p, const std::vector<const float*>& in, const float* mask, float* output, int64_t h0, int64_t q0) {
    auto& engine = OneDnnCpuEngine();
    auto at = [&](const float* base, const StridedView& v, int64_t head, int64_t row) {
      return const_cast<float*>(base) + v.offset + head * v.strides[1] + row * v.strides[2];
    };
    memory query(p.query_md, engine, at(in[0], g_.query, h0, q0));
    memory keys(p.keys_md, engine, at(in[1], g_.keys_transposed, h0, 0));
    memory values(p.values_md, engine, at(in[2], g_.values, h0, 0));
    memory scores(p.scores_md, engine, p.scratch.data());
    memory out(p.output_md, engine, at(output, g_.output, h0, q0));
    ExecuteAndWait(p.scores, stream_, {{DNNL_ARG_SRC, query}, {DNNL_ARG_WEIGHTS, keys}, {DNNL_ARG_DST, scores}});
    if (mask) AddMask(p, mask, h0, q0);
    ExecuteAndWait(p.softmax, stream_, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}});
    ExecuteAndWait(p.context, stream_, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_WEIGHTS, values}, {DNNL_ARG_DST, out}});
  }

  // scores[b, h, q, k] += mask at (b, h0 + h, q0 + q, k).
  void AddMask(Pass& p, const float* mask, int64_t h0, int64_t q0) {
    const StridedView& m = *g_.mask;
    const int64_t keys = g_.keys();
    float* row = p.scratch.data();
    for (int64_t b = 0; b < g_.batch(); ++b)
      for (int64_t h = 0; h < p.heads; ++h)
        for (int64_t q = 0; q < p.queries; ++q, row += keys) {
          const float* src = mask + m.offset + b * m.strides[0] + (h0 + h) * m.strides[1] + (q0 + q) * m.strides[2];
          if (m.strides[3] == 1)
            for (int64_t k = 0; k < keys; ++k) row[k] += src[k];
          else
            for (int64_t k = 0; k < keys; ++k) row[k] += src[k * m.strides[3]];
        }
  }

  AttentionGeometry g_;
  int64_t head_tile_, query_tile_;
  std::map<std::pair<int64_t, int64_t>, Pass> passes_;  // (heads, queries) of a pass -> its primitives
  std::vector<float> mask_constant_;
  dnnl::stream stream_;  // made at bind
  std::vector<const Tensor*> prepared_;
  Tensor result_;
};

}  // namespace

Policy DefaultAttentionPolicy(const AttentionGeometry& g) { return TilePolicy(g.heads(), g.queries()); }

std::vector<Policy> AttentionPolicies(const AttentionGeometry& g) {
  std::vector<int64_t> head_tiles, query_tiles;
  for (int64_t h = 1; h <= g.heads(); ++h)
    if (g.heads() % h == 0) head_tiles.push_back(h);
  for (int64_t q = g.queries(); q >= 8; q = (q + 1) / 2) query_tiles.push_back(q);
  if (query_tiles.empty()) query_tiles.push_back(g.queries());
  std::vector<Policy> out;
  for (int64_t h : head_tiles)
    for (int64_t q : query_tiles) out.push_back(TilePolicy(h, q));
  return out;
}

std::string AttentionPolicyProblem(const AttentionGeometry& g, const Policy& policy) {
  const auto h = IntKnob(policy, "head_tile"), q = IntKnob(policy, "query_tile");
  if (!h || *h < 1 || *h > g.heads()) return "knob 'head_tile' must be an integer from 1 to " + std::to_string(g.heads());
  if (!q || *q < 1 || *q > g.queries()) return "knob 'query_tile' must be an integer from 1 to " + std::to_string(g.queries());
  if (policy.size() != 2) return "the attention policy is 'head_tile' and 'query_tile' only";
  return {};
}

Result<std::unique_ptr<Kernel>> AttentionKernel(const AttentionGeometry& g, const Policy& policy) {
  if (const std::string problem = AttentionPolicyProblem(g, policy); !problem.empty()) return Status::InvalidInput("attention: " + problem);
  return std::unique_ptr<Kernel>(new FusedAttention(g, *IntKnob(policy, "head_tile"), *IntKnob(policy, "query_tile")));
}

}  // namespace tilebank::engine
