#include "engine/backends/onednn/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "engine/backends/onednn/attention_kernel_base.h"
#include "engine/backends/onednn/one_pass_attention.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/simd/softmax_rows_simd.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

using dnnl::memory;

namespace {

std::optional<int64_t> IntKnob(const Policy& policy, const char* name) {
  for (const Knob& k : policy)
    if (k.name == name)
      if (const auto* v = std::get_if<int64_t>(&k.value)) return *v;
  return std::nullopt;
}

constexpr const char* kOnePass = "one_pass";

Policy TilePolicy(int64_t head_tile, int64_t query_tile) { return {{"head_tile", head_tile}, {"query_tile", query_tile}}; }
Policy OnePassPolicy(int64_t query_tile) { return {{"kernel", std::string(kOnePass)}, {"query_tile", query_tile}}; }

// A oneDNN descriptor of `dims` read with `strides` (extent-1 dimensions get a stride oneDNN accepts).
memory::desc ViewDesc(const memory::dims& dims, std::vector<int64_t> strides) {
  int64_t widest = 1;
  for (size_t d = 0; d < dims.size(); ++d) widest = std::max(widest, strides[d] * dims[d]);
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] == 1) strides[d] = widest;
  return memory::desc(dims, memory::data_type::f32, memory::dims(strides.begin(), strides.end()));
}

// Per tile of heads and queries, oneDNN's two products and a softmax between them over a scratch of
// the tile's scores.
class OneDnnAttention : public AttentionKernelBase {
 public:
  OneDnnAttention(AttentionGeometry g, int64_t head_tile, int64_t query_tile) : AttentionKernelBase(std::move(g)), head_tile_(head_tile), query_tile_(query_tile) {}

  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    return CatchOneDnnErrors([&]() -> Result<bool> {
      if (Status taken = TakeInputs(shapes.size(), constants); !taken.ok()) return taken;
      stream_ = dnnl::stream(OneDnnCpuEngine());
      for (int64_t h : {head_tile_, g_.heads() % head_tile_})
        for (int64_t q : {query_tile_, g_.queries() % query_tile_})
          if (h > 0 && q > 0 && !passes_.count({h, q})) passes_[{h, q}] = MakePass(h, q);
      return true;
    });
  }

  Status RunDirect(const std::vector<const float*>& inputs, float* output) override {
    return CatchOneDnnErrors([&]() -> Status {
      const float* mask = MaskOf(inputs);
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
    memory::desc query_md, keys_md, scores_md, values_md, output_md;
    std::vector<float> scratch;
    // Where the output's rows are strided (oneDNN 2.6's matmul has only its reference kernel for
    // such a destination): the context goes into `rows` first, then a reorder puts it in place.
    std::vector<float> rows;
    memory::desc rows_md;
    dnnl::reorder place;
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
    memory::desc context_md = p.output_md;
    if (g_.output.strides[3] != 1) {
      p.rows_md = memory::desc({b, heads, queries, dv}, memory::data_type::f32, memory::format_tag::abcd);
      p.rows.assign(static_cast<size_t>(b * heads * queries * dv), 0.f);
      p.place = dnnl::reorder(dnnl::reorder::primitive_desc(engine, p.rows_md, engine, p.output_md));
      context_md = p.rows_md;
    }
    p.context = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(p.scores_md, p.values_md, context_md), engine));
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
    // The softmax on Highway rather than oneDNN's, whose rows with a NaN or a +inf come out finite
    // (a NaN score spreads to its whole row, as in the unfused graph).
    const int64_t len = g_.keys(), score_rows = len > 0 ? static_cast<int64_t>(p.scratch.size()) / len : 0;
    float* s = p.scratch.data();
    if (len > 0)  // no keys: no scores to normalize
      ParallelFor(score_rows, std::max<int64_t>(1, 16384 / len), [&](int64_t begin, int64_t end) {
      SoftmaxRowsSimd(s + begin * len, s + begin * len, end - begin, len, len, len, {});
    });
    if (p.rows.empty()) {
      ExecuteAndWait(p.context, stream_, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_WEIGHTS, values}, {DNNL_ARG_DST, out}});
      return;
    }
    memory rows(p.rows_md, engine, p.rows.data());
    ExecuteAndWait(p.context, stream_, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_WEIGHTS, values}, {DNNL_ARG_DST, rows}});
    ExecuteAndWait(p.place, stream_, {{DNNL_ARG_FROM, rows}, {DNNL_ARG_TO, out}});
  }

  // scores[b, h, q, k] += mask at (b, h0 + h, q0 + q, k).
  void AddMask(Pass& p, const float* mask, int64_t h0, int64_t q0) {
    const int64_t keys = g_.keys();
    for (int64_t b = 0; b < g_.batch(); ++b)
      for (int64_t h = 0; h < p.heads; ++h)
        AddMaskRows(mask, b, h0 + h, q0, p.queries, p.scratch.data() + (b * p.heads + h) * p.queries * keys, keys);
  }

  int64_t head_tile_, query_tile_;
  std::map<std::pair<int64_t, int64_t>, Pass> passes_;  // (heads, queries) of a pass -> its primitives
  dnnl::stream stream_;  // made at bind
};

}  // namespace

Policy DefaultAttentionPolicy(const AttentionGeometry& g) {
  // oneDNN's passes over all heads and queries at once write every score; beyond a few MiB those
  // leave the cache (MobileViT's 16 heads of 1024 x 1024: 64 MiB, 1.4x slower than one pass, and the
  // scratch in the process's peak memory). At or below, oneDNN's primitives ran BERT's and ViT's
  // blocks faster (docs/PERFORMANCE.md).
  constexpr int64_t kWholeScoresBytes = 4 << 20;
  const int64_t scores_bytes = g.batch() * g.heads() * g.queries() * g.keys() * static_cast<int64_t>(sizeof(float));
  if (scores_bytes > kWholeScoresBytes) return OnePassPolicy(std::min<int64_t>(24, g.queries()));
  return TilePolicy(g.heads(), g.queries());
}

std::vector<Policy> AttentionPolicies(const AttentionGeometry& g) {
  std::vector<Policy> out;
  for (int64_t rows : {24, 48, 12, 96}) {
    const int64_t tile = std::min<int64_t>(rows, g.queries());
    if (std::find(out.begin(), out.end(), OnePassPolicy(tile)) == out.end()) out.push_back(OnePassPolicy(tile));
  }
  std::vector<int64_t> head_tiles, query_tiles;
  for (int64_t h = 1; h <= g.heads(); ++h)
    if (g.heads() % h == 0) head_tiles.push_back(h);
  for (int64_t q = g.queries(); q >= 8; q = (q + 1) / 2) query_tiles.push_back(q);
  if (query_tiles.empty()) query_tiles.push_back(g.queries());
  // oneDNN's tilings, those whose scores take nearest 1 MiB (a core's cache) first: a search cut
  // short by its trials tries those before the ones that spill or run many small passes.
  std::vector<std::pair<double, Policy>> tilings;
  for (int64_t h : head_tiles)
    for (int64_t q : query_tiles) {
      const double bytes = static_cast<double>(g.batch() * h * q * g.keys()) * sizeof(float);
      tilings.emplace_back(std::fabs(std::log2(bytes / (1 << 20))), TilePolicy(h, q));
    }
  std::stable_sort(tilings.begin(), tilings.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [distance, tiles] : tilings) out.push_back(std::move(tiles));
  return out;
}

std::string AttentionTilesProblem(const Policy& tiles, const AttentionGeometry* g) {
  const std::string kernel = TextKnob(tiles, "kernel", "");
  const bool one_pass = kernel == kOnePass;
  if (!kernel.empty() && !one_pass) return "knob 'kernel' must be '" + std::string(kOnePass) + "' where given (oneDNN's passes have none)";
  if (tiles.size() != 2) return one_pass ? "the one-pass attention policy is 'kernel' and 'query_tile' only" : "the attention policy is 'head_tile' and 'query_tile' only";
  auto within = [&](const char* name, int64_t most) -> std::string {
    const auto v = IntKnob(tiles, name);
    if (v && *v >= 1 && (!g || *v <= most)) return {};
    return std::string("knob '") + name + "' must be " + (g ? "an integer from 1 to " + std::to_string(most) : std::string("a positive integer"));
  };
  if (!one_pass)
    if (std::string problem = within("head_tile", g ? g->heads() : 0); !problem.empty()) return problem;
  return within("query_tile", g ? g->queries() : 0);
}

std::string AttentionPolicyProblem(const AttentionGeometry& g, const Policy& policy) { return AttentionTilesProblem(policy, &g); }

Result<std::unique_ptr<Kernel>> AttentionKernel(const AttentionGeometry& g, const Policy& policy) {
  if (const std::string problem = AttentionPolicyProblem(g, policy); !problem.empty()) return Status::InvalidInput("attention: " + problem);
  if (TextKnob(policy, "kernel", "") == kOnePass) return OnePassAttentionKernel(g, *IntKnob(policy, "query_tile"));
  return std::unique_ptr<Kernel>(new OneDnnAttention(g, *IntKnob(policy, "head_tile"), *IntKnob(policy, "query_tile")));
}

}  // namespace tilebank::engine
