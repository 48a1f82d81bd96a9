// Gradient fusion plans: the gradients, in ready order, split into contiguous segments, each
// reduced by one AllReduce. The timeline model (one channel): a segment's AllReduce starts when
// its last gradient is ready and the previous segment's has finished; the hangover is the time
// from the last gradient ready to the last AllReduce done.
//
// The search is exact under that model: dynamic programming over split points gives, for every
// segment count up to the cap, the split that finishes soonest (a later finish of the previous
// segments never lets the rest finish sooner, so the soonest prefix is the one to extend).
// Besides the planner, the plans other systems use, for comparison: no fusion, one bucket,
// PyTorch DDP's (1 MB first bucket, then 25 MB), Horovod's threshold (64 MB and 128 MB), HCCL's default split
// (96.54% / 3.46% of the bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/gdat/allreduce_cost.h"
#include "engine/gdat/gradient_profile.h"

namespace tilebank::engine {

struct FusionPlan {
  std::string name;          // "tuned", "ddp", "one bucket", ...
  std::vector<size_t> ends;  // each segment's end (exclusive) in the gradient list; the last is its size
  size_t segments() const { return ends.size(); }
};

struct PlanTimeline {
  double finish_ms = 0;    // the last AllReduce done, after the backward pass starts
  double hangover_ms = 0;  // finish_ms - the last gradient's ready time
  std::vector<int64_t> segment_bytes;
};

// Each segment's bytes: the sums of `gradient_bytes` between consecutive `ends`.
std::vector<int64_t> SegmentBytes(const std::vector<size_t>& ends, const std::vector<int64_t>& gradient_bytes);

PlanTimeline Simulate(const FusionPlan& plan, const GradientProfile& profile, const AllReduceCost& cost);

// For each segment count from 1 to `max_segments` (and at most one per gradient), the plan that
// finishes soonest under the model; sorted by predicted finish, soonest first, ties to fewer segments.
std::vector<FusionPlan> BestPlans(const GradientProfile& profile, const AllReduceCost& cost, size_t max_segments);

// Closes a segment when its bytes reach `cap_bytes` (the first segment at `first_cap_bytes`).
FusionPlan ThresholdPlan(const GradientProfile& profile, const std::string& name, int64_t first_cap_bytes, int64_t cap_bytes);
// Closes a segment where the running share of all bytes first reaches each of `shares` (cumulative,
// ascending, below 1).
FusionPlan ShareSplitPlan(const GradientProfile& profile, const std::string& name, const std::vector<double>& cumulative_shares);
// The anchors, in this order: no fusion, one bucket, ddp, horovod 64 MB, horovod 128 MB, hccl.
std::vector<FusionPlan> AnchorPlans(const GradientProfile& profile);

// "3,10,161" and back; ParseEnds refuses ends that do not increase or do not finish at `count`.
std::string EndsText(const std::vector<size_t>& ends);
Result<std::vector<size_t>> ParseEnds(const std::string& text, size_t count);

}  // namespace tilebank::engine
