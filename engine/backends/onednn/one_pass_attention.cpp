#include "engine/backends/onednn/one_pass_attention.h"

#include <algorithm>

#include "engine/backends/onednn/attention_kernel_base.h"
#include "engine/backends/simd/packed_gemm.h"
#include "engine/backends/simd/softmax_rows_simd.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

class OnePassAttention : public AttentionKernelBase {
 public:
  OnePassAttention(AttentionGeometry g, int64_t query_tile) : AttentionKernelBase(std::move(g)), query_tile_(std::min(query_tile, g_.queries())) {}

  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    if (Status taken = TakeInputs(shapes.size(), constants); !taken.ok()) return taken;
    Workspaces(ParallelThreads());
    return true;
  }

  Status RunDirect(const std::vector<const float*>& inputs, float* output) override {
    const float* mask = MaskOf(inputs);
    const int64_t blocks = (g_.queries() + query_tile_ - 1) / query_tile_, units = g_.batch() * g_.heads() * blocks;
    const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(ParallelThreads(), units));
    Workspaces(threads);
    // Thread t takes a run of (head, block) units in order, so that it packs each head it meets once.
    ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        Workspace& w = workspaces_[static_cast<size_t>(t)];
        w.packed_head = -1;
        for (int64_t unit = units * t / threads; unit < units * (t + 1) / threads; ++unit)
          RunBlock(w, inputs, mask, output, unit / blocks, unit % blocks * query_tile_);
      }
    });
    return Status::Ok();
  }

  bool RunsOnAnyThread() const override { return true; }
  std::string Identity() const override { return "one-pass attention, blocks of " + std::to_string(query_tile_) + " queries"; }

 private:
  struct Workspace {
    PackedGemmWeights keys, values;  // the head's scale * K^T [D, Sk] and V [Sk, Dv]
    int64_t packed_head = -1;        // b * heads + h of what keys and values hold, or -1
    std::vector<float> scores;       // [query_tile][Sk]
    std::vector<float> reciprocal_sums;  // [query_tile]: 1 / each row's sum of exponentials
    std::vector<float> query_rows;   // [query_tile][D], where Q's rows are not contiguous
    std::vector<float> output_rows;  // [query_tile][Dv], where the output's rows are not contiguous
  };

  void Workspaces(int64_t threads) {
    const int64_t d = g_.query.shape[3], keys = g_.keys(), dv = g_.values.shape[3];
    while (static_cast<int64_t>(workspaces_.size()) < threads) {
      Workspace w{PackedGemmWeights(d, keys), PackedGemmWeights(keys, dv), -1, std::vector<float>(static_cast<size_t>(query_tile_ * keys)),
                  std::vector<float>(static_cast<size_t>(query_tile_)), {}, {}};
      if (g_.query.strides[3] != 1) w.query_rows.resize(static_cast<size_t>(query_tile_ * d));
      if (g_.output.strides[3] != 1) w.output_rows.resize(static_cast<size_t>(query_tile_ * dv));
      workspaces_.push_back(std::move(w));
    }
  }

  static const float* At(const float* base, const StridedView& v, int64_t b, int64_t h, int64_t row) {
    return base + v.offset + b * v.strides[0] + h * v.strides[1] + row * v.strides[2];
  }

  // Queries [q0, q0 + query_tile) of head `head` (b * heads + h).
  void RunBlock(Workspace& w, const std::vector<const float*>& in, const float* mask, float* output, int64_t head, int64_t q0) const {
    const int64_t b = head / g_.heads(), h = head % g_.heads(), count = std::min(query_tile_, g_.queries() - q0);
    const int64_t d = g_.query.shape[3], keys = g_.keys(), dv = g_.values.shape[3];
    if (w.packed_head != head) {
      const StridedView &kt = g_.keys_transposed, &v = g_.values;
      w.keys.Fill(At(in[1], kt, b, h, 0), kt.strides[2], kt.strides[3], g_.scale);
      w.values.Fill(At(in[2], v, b, h, 0), v.strides[2], v.strides[3]);
      w.packed_head = head;
    }
    const float* query = At(in[0], g_.query, b, h, q0);
    int64_t lda = g_.query.strides[2];
    if (!w.query_rows.empty()) {  // Q's columns are not adjacent: its rows copied together
      for (int64_t r = 0; r < count; ++r)
        for (int64_t c = 0; c < d; ++c) w.query_rows[static_cast<size_t>(r * d + c)] = query[r * lda + c * g_.query.strides[3]];
      query = w.query_rows.data(), lda = d;
    }
    const ConvEpilogue none;
    PackedGemm(PackedGemmA::Rows(query, lda, d), count, w.keys, none, w.scores.data(), keys, 0, w.keys.panels());
    if (mask) AddMaskRows(mask, b, h, q0, count, w.scores.data(), keys);
    SoftmaxRowsOptions unscaled;  // each row's 1 / sum applied to its Dv results, not its Sk scores
    unscaled.reciprocal_sums = w.reciprocal_sums.data();
    SoftmaxRowsSimd(w.scores.data(), w.scores.data(), count, keys, keys, keys, unscaled);
    float* out = const_cast<float*>(At(output, g_.output, b, h, q0));
    const int64_t ldc = w.output_rows.empty() ? g_.output.strides[2] : dv;
    PackedGemm(PackedGemmA::Rows(w.scores.data(), keys, keys), count, w.values, none, w.output_rows.empty() ? out : w.output_rows.data(),
               ldc, 0, w.values.panels());
    if (w.output_rows.empty()) {
      for (int64_t r = 0; r < count; ++r)
        for (float *o = out + r * ldc, *end = o + dv; o < end; ++o) *o *= w.reciprocal_sums[static_cast<size_t>(r)];
    } else {  // the output's columns are not adjacent: the rows scattered there
      for (int64_t r = 0; r < count; ++r)
        for (int64_t c = 0; c < dv; ++c)
          out[r * g_.output.strides[2] + c * g_.output.strides[3]] = w.output_rows[static_cast<size_t>(r * dv + c)] * w.reciprocal_sums[static_cast<size_t>(r)];
    }
  }

  int64_t query_tile_;
  std::vector<Workspace> workspaces_;  // one a thread
};

}  // namespace

std::unique_ptr<Kernel> OnePassAttentionKernel(const AttentionGeometry& g, int64_t query_tile) {
  return std::unique_ptr<Kernel>(new OnePassAttention(g, query_tile));
}

}  // namespace tilebank::engine
