#include "engine/backends/onednn/group_norm_in_family.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Rows summed in float lanes before their sums join the double totals.
constexpr int64_t kRowsPerBlock = 64;
// Elements a thread takes at least.
constexpr int64_t kGrain = int64_t{1} << 14;

class GroupNormFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  GroupNormFamilyKernel(const LayoutFamilyOp& op, const ChannelRows& rows) : op_(op), r_(rows), per_group_(rows.channels / op.groups) {}

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const int64_t image = r_.image_size(), padded = r_.padded, C = r_.channels;
    std::vector<double> sums(static_cast<size_t>(padded));
    std::vector<float> mean(static_cast<size_t>(padded)), a(static_cast<size_t>(padded)), b(static_cast<size_t>(padded));
    const double count = static_cast<double>(per_group_ * r_.spatial);
    for (int64_t n = 0; n < r_.images; ++n) {
      const float* x = in[0] + n * image;
      float* y = out + n * image;
      ChannelSums(x, PerChannelFold::kSum, mean, &sums);
      std::vector<double> group_mean = GroupTotals(sums);
      for (double& m : group_mean) m = count > 0 ? m / count : 0.0;
      for (int64_t c = 0; c < padded; ++c) mean[c] = c < C ? static_cast<float>(group_mean[c / per_group_]) : 0.0f;
      ChannelSums(x, PerChannelFold::kSquaredDeviation, mean, &sums);
      const std::vector<double> deviations = GroupTotals(sums);
      for (int64_t c = 0; c < padded; ++c) {
        if (c >= C) {  // padding channels stay 0
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
  // sums[c] = the sum over channel c's elements of x (kSum) or of (x - mean[c])^2, for every (padded) channel.
  void ChannelSums(const float* x, PerChannelFold fold, const std::vector<float>& mean, std::vector<double>* sums) const {
    std::fill(sums->begin(), sums->end(), 0.0);
    std::mutex merge;
    const int64_t width = r_.width;
    ParallelFor(r_.rows, std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
      std::vector<double> total(static_cast<size_t>(r_.padded), 0.0);
      std::vector<float> lanes(static_cast<size_t>(width));
      for (int64_t start = begin; start < end;) {
        // A block of rows that starts and stays on one run of channels.
        const int64_t first = r_.FirstChannel(start);
        const int64_t stop = std::min({end, start + kRowsPerBlock, r_.RunEnd(start)});
        std::fill(lanes.begin(), lanes.end(), 0.0f);
        ReducePerChannelRows(fold, x + start * width, stop - start, width, width, lanes.data(), mean.data() + first);
        for (int64_t j = 0; j < width; ++j) total[first + j] += lanes[j];
        start = stop;
      }
      std::lock_guard<std::mutex> lock(merge);
      for (int64_t c = 0; c < r_.padded; ++c) (*sums)[c] += total[c];
    });
  }

  std::vector<double> GroupTotals(const std::vector<double>& sums) const {
    std::vector<double> totals(static_cast<size_t>(op_.groups), 0.0);
    for (int64_t c = 0; c < r_.channels; ++c) totals[c / per_group_] += sums[c];
    return totals;
  }

  void Normalize(const float* x, const std::vector<float>& a, const std::vector<float>& b, float* y) const {
    const PerChannelMap map = op_.swish ? PerChannelMap::kAffineSwish : PerChannelMap::kAffine;
    const int64_t width = r_.width;
    ParallelFor(r_.rows, std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end;) {  // a run of rows on one run of channels at a time
        const int64_t first = r_.FirstChannel(r), stop = std::min(end, r_.RunEnd(r)), valid = std::min(width, r_.channels - first);
        MapPerChannelRows(map, x + r * width, y + r * width, stop - r, width, valid, a.data() + first, b.data() + first);  // padding channels: 0
        r = stop;
      }
    });
  }

  LayoutFamilyOp op_;
  ChannelRows r_;
  int64_t per_group_ = 1;
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
