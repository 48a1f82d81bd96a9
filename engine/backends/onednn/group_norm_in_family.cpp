#include "engine/backends/onednn/group_norm_in_family.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/simd/swish_float.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Rows summed in float lanes before their sums join the double totals.
constexpr int64_t kRowsPerBlock = 64;
// Elements a thread takes at least.
constexpr int64_t kGrain = int64_t{1} << 14;

class GroupNormFamilyKernel : public Kernel {
 public:
  GroupNormFamilyKernel(const LayoutFamilyOp& op, const ChannelRows& rows)
      : op_(op), block_(rows.block), N_(rows.images), C_(rows.channels), spatial_(rows.spatial), padded_(rows.padded), width_(rows.width),
        rows_(rows.rows), per_group_(rows.channels / op.groups) {}
  Status Prepare(const std::vector<const Tensor*>&) override { return Unsupported(); }
  Status Run() override { return Unsupported(); }
  Status Fetch(Tensor*) override { return Unsupported(); }

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const int64_t image = padded_ * spatial_;
    std::vector<double> sums(static_cast<size_t>(padded_));
    std::vector<float> mean(static_cast<size_t>(padded_)), a(static_cast<size_t>(padded_)), b(static_cast<size_t>(padded_));
    const double count = static_cast<double>(per_group_ * spatial_);
    for (int64_t n = 0; n < N_; ++n) {
      const float* x = in[0] + n * image;
      float* y = out + n * image;
      ChannelSums(x, [](float v, float) { return v; }, mean, &sums);
      std::vector<double> group_mean = GroupTotals(sums);
      for (double& m : group_mean) m = count > 0 ? m / count : 0.0;
      for (int64_t c = 0; c < padded_; ++c) mean[c] = c < C_ ? static_cast<float>(group_mean[c / per_group_]) : 0.0f;
      ChannelSums(x, [](float v, float m) { return (v - m) * (v - m); }, mean, &sums);
      const std::vector<double> deviations = GroupTotals(sums);
      for (int64_t c = 0; c < padded_; ++c) {
        if (c >= C_) {  // padding channels stay 0
          a[c] = b[c] = 0.0f;
          continue;
        }
        const int64_t g = c / per_group_;
        const double inv = 1.0 / std::sqrt((count > 0 ? deviations[g] / count : 0.0) + op_.epsilon);
        a[c] = static_cast<float>(op_.scale[c] * inv);
        b[c] = static_cast<float>(op_.shift[c] - group_mean[g] * op_.scale[c] * inv);
      }
      Normalize(x, a, b, y);
    }
    return Status::Ok();
  }

 private:
  static Status Unsupported() { return Status::InvalidInput("a layout-family kernel runs only on a model's direct path"); }
  int64_t FirstChannel(int64_t row) const { return block_ ? row / spatial_ * block_ : 0; }

  // sums[c] = the sum over channel c's elements of term(x, mean[c]), for every (padded) channel.
  template <class Term>
  void ChannelSums(const float* x, Term term, const std::vector<float>& mean, std::vector<double>* sums) const {
    std::fill(sums->begin(), sums->end(), 0.0);
    std::mutex merge;
    ParallelFor(rows_, std::max<int64_t>(1, kGrain / width_), [&](int64_t begin, int64_t end) {
      std::vector<double> total(static_cast<size_t>(padded_), 0.0);
      std::vector<float> lanes(static_cast<size_t>(width_));
      for (int64_t start = begin; start < end;) {
        // A block of rows that starts and stays on one run of channels (a blocked layout changes
        // channels every `spatial_` rows).
        const int64_t first = FirstChannel(start);
        int64_t stop = std::min(end, start + kRowsPerBlock);
        if (block_) stop = std::min(stop, (start / spatial_ + 1) * spatial_);
        std::fill(lanes.begin(), lanes.end(), 0.0f);
        const float* m = mean.data() + first;
        for (int64_t r = start; r < stop; ++r) {
          const float* row = x + r * width_;
          for (int64_t j = 0; j < width_; ++j) lanes[j] += term(row[j], m[j]);
        }
        for (int64_t j = 0; j < width_; ++j) total[first + j] += lanes[j];
        start = stop;
      }
      std::lock_guard<std::mutex> lock(merge);
      for (int64_t c = 0; c < padded_; ++c) (*sums)[c] += total[c];
    });
  }

  std::vector<double> GroupTotals(const std::vector<double>& sums) const {
    std::vector<double> totals(static_cast<size_t>(op_.groups), 0.0);
    for (int64_t c = 0; c < C_; ++c) totals[c / per_group_] += sums[c];
    return totals;
  }

  void Normalize(const float* x, const std::vector<float>& a, const std::vector<float>& b, float* y) const {
    const bool swish = op_.swish;
    ParallelFor(rows_, std::max<int64_t>(1, kGrain / width_), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t first = FirstChannel(r), valid = std::min(width_, C_ - first);
        const float *xr = x + r * width_, *ar = a.data() + first, *br = b.data() + first;
        float* yr = y + r * width_;
        for (int64_t j = valid; j < width_; ++j) yr[j] = 0.0f;  // padding channels: 0 whatever they held
        if (swish) {
          TB_VECTORIZE_IN_PLACE
          for (int64_t j = 0; j < valid; ++j) yr[j] = SwishFloat(xr[j] * ar[j] + br[j]);
        } else {
          TB_VECTORIZE_IN_PLACE
          for (int64_t j = 0; j < valid; ++j) yr[j] = xr[j] * ar[j] + br[j];
        }
      }
    });
  }

  LayoutFamilyOp op_;
  int64_t block_ = 0;  // channels per block; 0: channels-last
  int64_t N_ = 0, C_ = 0, spatial_ = 1, padded_ = 0, width_ = 0, rows_ = 0, per_group_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> GroupNormInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  const auto& shape = op.output;
  if (shape.size() < 3 || op.groups < 1 || shape[1] % op.groups || static_cast<int64_t>(op.scale.size()) != shape[1] ||
      op.shift.size() != op.scale.size())
    return Status::InvalidInput("a group norm in a layout family takes per-channel scale and shift and groups dividing the channels");
  auto rows = ChannelRowsOf(md, shape);
  if (!rows.ok()) return rows.status();
  return std::unique_ptr<Kernel>(new GroupNormFamilyKernel(op, *rows));
}

}  // namespace tilebank::engine
