#include "engine/gdat/fusion_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace tilebank::engine {

std::vector<int64_t> SegmentBytes(const std::vector<size_t>& ends, const std::vector<int64_t>& gradient_bytes) {
  std::vector<int64_t> sums;
  size_t begin = 0;
  for (size_t end : ends) {
    int64_t sum = 0;
    for (size_t i = begin; i < end; ++i) sum += gradient_bytes[i];
    sums.push_back(sum);
    begin = end;
  }
  return sums;
}

PlanTimeline Simulate(const FusionPlan& plan, const GradientProfile& profile, const AllReduceCost& cost) {
  PlanTimeline t;
  std::vector<int64_t> gradient_bytes;
  for (const auto& g : profile.gradients) gradient_bytes.push_back(g.bytes);
  t.segment_bytes = SegmentBytes(plan.ends, gradient_bytes);
  double channel_free = 0;
  for (size_t s = 0; s < plan.ends.size(); ++s) {
    const double start = std::max(profile.gradients[plan.ends[s] - 1].ready_ms, channel_free);
    channel_free = start + cost.Ms(t.segment_bytes[s]);
  }
  t.finish_ms = channel_free;
  t.hangover_ms = channel_free - profile.gradients.back().ready_ms;
  return t;
}

std::vector<FusionPlan> BestPlans(const GradientProfile& profile, const AllReduceCost& cost, size_t max_segments) {
  const size_t n = profile.gradients.size();
  const size_t k_max = std::max<size_t>(1, std::min(max_segments, n));
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + profile.gradients[i].bytes;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // finish[k][j]: the soonest the first j gradients are reduced in exactly k segments; from[k][j]
  // the end of the (k-1)-segment prefix it extends.
  std::vector<std::vector<double>> finish(k_max + 1, std::vector<double>(n + 1, kNever));
  std::vector<std::vector<size_t>> from(k_max + 1, std::vector<size_t>(n + 1, 0));
  finish[0][0] = 0;
  for (size_t k = 1; k <= k_max; ++k)
    for (size_t j = k; j <= n; ++j)
      for (size_t i = k - 1; i < j; ++i) {
        if (finish[k - 1][i] == kNever) continue;
        const double done = std::max(profile.gradients[j - 1].ready_ms, finish[k - 1][i]) + cost.Ms(prefix[j] - prefix[i]);
        if (done < finish[k][j]) {
          finish[k][j] = done;
          from[k][j] = i;
        }
      }
  std::vector<std::pair<double, FusionPlan>> plans;
  for (size_t k = 1; k <= k_max; ++k) {
    if (finish[k][n] == kNever) continue;
    FusionPlan plan{"tuned", {}};
    for (size_t j = n, level = k; level > 0; j = from[level][j], --level) plan.ends.push_back(j);
    std::reverse(plan.ends.begin(), plan.ends.end());
    plans.push_back({finish[k][n], std::move(plan)});
  }
  std::stable_sort(plans.begin(), plans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<FusionPlan> out;
  for (auto& p : plans) out.push_back(std::move(p.second));
  return out;
}

FusionPlan ThresholdPlan(const GradientProfile& profile, const std::string& name, int64_t first_cap_bytes, int64_t cap_bytes) {
  FusionPlan plan{name, {}};
  int64_t bytes = 0;
  for (size_t i = 0; i < profile.gradients.size(); ++i) {
    bytes += profile.gradients[i].bytes;
    if (bytes >= (plan.ends.empty() ? first_cap_bytes : cap_bytes)) {
      plan.ends.push_back(i + 1);
      bytes = 0;
    }
  }
  if (plan.ends.empty() || plan.ends.back() != profile.gradients.size()) plan.ends.push_back(profile.gradients.size());
  return plan;
}

FusionPlan ShareSplitPlan(const GradientProfile& profile, const std::string& name, const std::vector<double>& cumulative_shares) {
  FusionPlan plan{name, {}};
  const double total = static_cast<double>(profile.TotalBytes());
  int64_t bytes = 0;
  size_t next = 0;
  for (size_t i = 0; i + 1 < profile.gradients.size() && next < cumulative_shares.size(); ++i) {
    bytes += profile.gradients[i].bytes;
    if (static_cast<double>(bytes) >= cumulative_shares[next] * total) {
      plan.ends.push_back(i + 1);
      while (next < cumulative_shares.size() && static_cast<double>(bytes) >= cumulative_shares[next] * total) ++next;
    }
  }
  plan.ends.push_back(profile.gradients.size());
  return plan;
}

std::vector<FusionPlan> AnchorPlans(const GradientProfile& profile) {
  constexpr int64_t kMiB = 1 << 20;
  FusionPlan none{"no fusion", {}};
  for (size_t i = 1; i <= profile.gradients.size(); ++i) none.ends.push_back(i);
  return {none,
          FusionPlan{"one bucket", {profile.gradients.size()}},
          ThresholdPlan(profile, "ddp (1 MB, then 25 MB)", 1 * kMiB, 25 * kMiB),
          ThresholdPlan(profile, "horovod (64 MB)", 64 * kMiB, 64 * kMiB),
          ThresholdPlan(profile, "horovod (128 MB)", 128 * kMiB, 128 * kMiB),
          ShareSplitPlan(profile, "hccl (96.54% / 3.46%)", {0.9654})};
}

std::string EndsText(const std::vector<size_t>& ends) {
  std::string text;
  for (size_t e : ends) text += (text.empty() ? "" : ",") + std::to_string(e);
  return text;
}

Result<std::vector<size_t>> ParseEnds(const std::string& text, size_t count) {
  std::vector<size_t> ends;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    size_t value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || (next != end && *next != ',')) return Status::InvalidInput("'" + text + "' is not a list of segment ends");
    if (value == 0 || (!ends.empty() && value <= ends.back()))
      return Status::InvalidInput("segment ends '" + text + "' must increase from 1");
    ends.push_back(value);
    p = next == end ? end : next + 1;
  }
  if (ends.empty() || ends.back() != count)
    return Status::InvalidInput("segment ends '" + text + "' must finish at the gradient count " + std::to_string(count));
  return ends;
}

}  // namespace tilebank::engine
