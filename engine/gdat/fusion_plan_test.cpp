// GDAT's planner: the cost model's fit, the timeline, the DP against every split of a small
// problem, the anchors' rules, and the policy text.
#include <doctest/doctest.h>

#include <random>

#include "engine/gdat/allreduce_cost.h"
#include "engine/gdat/fusion_plan.h"
#include "engine/gdat/gdat_policy.h"

namespace tilebank::engine {
namespace {

GradientProfile RandomProfile(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  GradientProfile p;
  double ready = 0;
  for (size_t i = 0; i < n; ++i) {
    ready += std::uniform_real_distribution<double>(0.0, 3.0)(rng);
    const int64_t numel = std::uniform_int_distribution<int64_t>(1, 3'000'000)(rng);
    p.gradients.push_back({"g" + std::to_string(i), numel, "float32", numel * 4, ready});
  }
  p.allreduce = {{4, 0.1}, {1 << 20, 0.7}, {16 << 20, 24.0}};
  return p;
}

TEST_CASE("allreduce cost: through the measured points, straight between them, non-decreasing") {
  const AllReduceCost cost({{4, 0.1}, {1 << 20, 0.7}, {16 << 20, 24.0}, {32 << 20, 20.0}});
  CHECK(cost.Ms(4) == doctest::Approx(0.1));
  CHECK(cost.Ms(1 << 20) == doctest::Approx(0.7));
  CHECK(cost.Ms(16 << 20) == doctest::Approx(24.0));
  CHECK(cost.Ms((1 << 20) / 2) == doctest::Approx((0.1 + 0.7) / 2).epsilon(0.01));
  CHECK(cost.Ms(32 << 20) == doctest::Approx(24.0));  // the noisy last point is read as the running maximum
  CHECK(cost.Ms(1) >= 0.0);
  double last = 0;
  for (int64_t n = 1; n < (int64_t{64} << 20); n = n * 3 / 2 + 1) {
    CHECK(cost.Ms(n) >= last - 1e-12);
    last = cost.Ms(n);
  }
}

TEST_CASE("timeline: a segment starts when its last gradient is ready and the channel is free") {
  GradientProfile p;
  p.gradients = {{"a", 1, "float32", 4, 1.0}, {"b", 1, "float32", 4, 2.0}, {"c", 1, "float32", 4, 10.0}};
  p.allreduce = {{4, 5.0}, {8, 5.0}};
  const AllReduceCost cost(p.allreduce);
  const PlanTimeline each = Simulate(FusionPlan{"x", {1, 2, 3}}, p, cost);
  CHECK(each.finish_ms == doctest::Approx(16.0));  // a: 1-6, b: 6-11, c: 11-16
  CHECK(each.hangover_ms == doctest::Approx(6.0));
  const PlanTimeline two = Simulate(FusionPlan{"x", {2, 3}}, p, cost);
  CHECK(two.finish_ms == doctest::Approx(15.0));  // ab: 2-7, c: 10-15
  CHECK(two.segment_bytes == std::vector<int64_t>{8, 4});
}

TEST_CASE("planner: for every segment count, the DP finds the soonest of all splits") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const GradientProfile p = RandomProfile(8, seed);
    const AllReduceCost cost(p.allreduce);
    const auto plans = BestPlans(p, cost, 8);
    REQUIRE(plans.size() == 8);
    // Every split of 8 gradients: 2^7 subsets of the 7 inner boundaries.
    std::vector<double> best_by_count(9, 1e300);
    for (uint32_t mask = 0; mask < 128; ++mask) {
      FusionPlan plan{"all", {}};
      for (size_t b = 0; b < 7; ++b)
        if (mask & (1u << b)) plan.ends.push_back(b + 1);
      plan.ends.push_back(8);
      best_by_count[plan.segments()] = std::min(best_by_count[plan.segments()], Simulate(plan, p, cost).finish_ms);
    }
    for (const auto& plan : plans) CHECK(Simulate(plan, p, cost).finish_ms == doctest::Approx(best_by_count[plan.segments()]));
    for (size_t i = 1; i < plans.size(); ++i) CHECK(Simulate(plans[i - 1], p, cost).finish_ms <= Simulate(plans[i], p, cost).finish_ms);
    const auto capped = BestPlans(p, cost, 3);
    REQUIRE(capped.size() == 3);
    for (const auto& plan : capped) CHECK(plan.segments() <= 3);
  }
}

TEST_CASE("anchors: no fusion, one bucket, DDP's 1 MB then 25 MB, Horovod's 64 and 128 MB, HCCL's 96.54% split") {
  GradientProfile p;
  for (int i = 0; i < 10; ++i) p.gradients.push_back({"g", 1 << 20, "float32", 4 << 20, static_cast<double>(i)});  // 4 MiB each
  const auto anchors = AnchorPlans(p);
  REQUIRE(anchors.size() == 6);
  CHECK(anchors[0].segments() == 10);
  CHECK(anchors[1].ends == std::vector<size_t>{10});
  CHECK(anchors[2].ends == std::vector<size_t>{1, 8, 10});  // 4 MiB >= 1 MiB; then 7 x 4 = 28 MiB >= 25 MiB
  CHECK(anchors[3].ends == std::vector<size_t>{10});        // 40 MiB never reaches 64 MiB
  CHECK(anchors[4].ends == std::vector<size_t>{10});        // nor 128 MiB
  CHECK(anchors[5].ends == std::vector<size_t>{10});        // 96.54% of 10 equal gradients is reached at the last
}

TEST_CASE("gdat.split policy: ends must increase and finish at the gradient count, sizes must add up") {
  const std::string descriptor = R"({"grads":[{"dtype":"float32","numel":2},{"dtype":"float16","numel":4},{"dtype":"float32","numel":1}],"world_size":2})";
  GradPolicy good;
  good.ends = {2, 3};
  good.segment_bytes = {16, 4};
  CHECK(GradPolicyProblem(descriptor, good.Knobs()) == "");
  GradPolicy wrong_sizes = good;
  wrong_sizes.segment_bytes = {12, 4};
  CHECK(GradPolicyProblem(descriptor, wrong_sizes.Knobs()).find("segment_bytes") != std::string::npos);
  GradPolicy short_ends = good;
  short_ends.ends = {2};
  short_ends.segment_bytes = {16};
  CHECK(GradPolicyProblem(descriptor, short_ends.Knobs()).find("must finish at the gradient count 3") != std::string::npos);
  const std::string bytes_unknown = R"({"grads":[{"dtype":"int8","numel":2}],"world_size":2})";
  GradPolicy one;
  one.ends = {1};
  CHECK(GradPolicyProblem(bytes_unknown, one.Knobs()).find("not a canonical gradient descriptor") != std::string::npos);
  CHECK(!ParseEnds("2,2,3", 3).ok());
  CHECK(!ParseEnds("0,3", 3).ok());
  CHECK(!ParseEnds("1,x", 3).ok());
  CHECK(ParseEnds("1,3", 3).value() == std::vector<size_t>{1, 3});
}

}  // namespace
}  // namespace tilebank::engine
