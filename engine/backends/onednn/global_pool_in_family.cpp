#include "engine/backends/onednn/global_pool_in_family.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Rows of a channels-last image a task folds at least (its partial result is one row).
constexpr int64_t kRowsPerTask = 256;

class GlobalPoolFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  GlobalPoolFamilyKernel(bool max, ChannelRows rows, HandoverLayout narrow)
      : fold_(max ? PerChannelFold::kMax : PerChannelFold::kSum), rows_(rows), narrow_(std::move(narrow)) {
    // Channels-last: each image's rows split into chunks, a partial row per chunk, then folded.
    chunks_ = rows_.block ? 1 : std::clamp<int64_t>(rows_.rows / kRowsPerTask, 1, 16);
    if (!rows_.block) partial_.resize(static_cast<size_t>(rows_.images * chunks_ * rows_.width));
  }
  // Its input may come in bf16; the pooled [N, C] is float32, row-major.
  HandoverLayout NarrowLayout(int input) const override { return input == 0 ? narrow_ : HandoverLayout{}; }
  Status UseNarrowLayouts(const std::vector<bool>& inputs, bool output) override {
    if (output) return Status::InvalidInput("a global pool writes float32");
    narrow_in_ = !inputs.empty() && inputs[0];
    return Status::Ok();
  }

  // in[0]: the tensor in the family; out: row-major [N, C].
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const ChannelRows& r = rows_;
    const bool max = fold_ == PerChannelFold::kMax;
    const float start = max ? -std::numeric_limits<float>::infinity() : 0.f;
    const float scale = max ? 1.f : 1.f / static_cast<float>(r.spatial);
    if (r.block) {  // one task per image and block: its rows are contiguous
      const int64_t blocks = r.padded / r.block;
      ParallelFor(r.images * blocks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t image = t / blocks, first = t % blocks * r.block, valid = std::min(r.block, r.channels - first);
          float* acc = out + image * r.channels + first;
          std::fill(acc, acc + valid, start);
          Fold(in[0], image * r.image_size() + first * r.spatial, r.spatial, valid, acc);
          if (!max) for (int64_t c = 0; c < valid; ++c) acc[c] *= scale;
        }
      });
      return Status::Ok();
    }
    const int64_t per_chunk = (r.rows + chunks_ - 1) / chunks_;
    ParallelFor(r.images * chunks_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t image = t / chunks_, row = t % chunks_ * per_chunk, count = std::min(per_chunk, r.rows - row);
        float* acc = partial_.data() + t * r.width;
        std::fill(acc, acc + r.width, start);
        if (count > 0) Fold(in[0], image * r.image_size() + row * r.width, count, r.channels, acc);
      }
    });
    for (int64_t image = 0; image < r.images; ++image) {
      float* acc = out + image * r.channels;
      const float* chunk = partial_.data() + image * chunks_ * r.width;
      std::copy(chunk, chunk + r.channels, acc);
      if (chunks_ > 1) ReducePerChannelRows(fold_, chunk + r.width, chunks_ - 1, r.width, r.channels, acc);
      if (!max) for (int64_t c = 0; c < r.channels; ++c) acc[c] *= scale;
    }
    return Status::Ok();
  }

 private:
  // `rows` rows of the input from element `at` on (narrow: bf16 bits) folded into acc.
  void Fold(const float* x, int64_t at, int64_t rows, int64_t valid, float* acc) const {
    if (narrow_in_) ReducePerChannelRows(fold_, reinterpret_cast<const uint16_t*>(x) + at, rows, rows_.width, valid, acc);
    else ReducePerChannelRows(fold_, x + at, rows, rows_.width, valid, acc);
  }

  PerChannelFold fold_;  // kMax or kSum (the average, scaled after)
  ChannelRows rows_;
  int64_t chunks_ = 1;
  std::vector<float> partial_;  // channels-last: a row per image and chunk
  HandoverLayout narrow_;       // the family's layout of the input, in bf16
  bool narrow_in_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> GlobalPoolInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  if (op.kind != LayoutFamilyOp::Kind::kGlobalPool || op.inputs.size() != 1) return Status::InvalidInput("a global pool of one input");
  auto rows = ChannelRowsOf(md, op.inputs[0]);
  if (!rows.ok()) return rows.status();
  return std::unique_ptr<Kernel>(new GlobalPoolFamilyKernel(op.op_type == "GlobalMaxPool", *rows, HandoverLayoutOf(WithBf16(md))));
}

}  // namespace tilebank::engine
