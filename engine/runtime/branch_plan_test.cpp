#include <doctest/doctest.h>

#include "engine/runtime/branch_plan.h"

namespace tilebank::engine::model {
namespace {

BranchStepFacts BranchStep(std::vector<int> reads, std::vector<int> writes, double cost = 1) {
  BranchStepFacts s;
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  s.cost = cost;
  return s;
}

TEST_CASE("branch plan: an Inception-like fork runs its branches as two lanes, the join after them, each lane in its order") {
  // v0 input; 0: v1 = A(v0) the fork's input; branches: 1: v2 = B(v1), 2: v3 = C(v2); 3: v4 = D(v1);
  // 4: v5 = E(v1), 5: v6 = F(v5); 6: v7 = Join(v3, v4, v6); 7: v8 = G(v7).
  const std::vector<BranchStepFacts> steps = {BranchStep({0}, {1}), BranchStep({1}, {2}, 2), BranchStep({2}, {3}, 2), BranchStep({1}, {4}, 2),
                                              BranchStep({1}, {5}, 1), BranchStep({5}, {6}, 1), BranchStep({3, 4, 6}, {7}), BranchStep({7}, {8})};
  const BranchPlan plan = PlanBranches(steps, 0.5);
  REQUIRE(plan.sections.size() == 1);
  const BranchSection& s = plan.sections[0];
  CHECK(s.begin == 1);
  CHECK(s.end == 6);
  // The heaviest chain (B, C: 4) alone; D and E-F (2 each) together: 4 against 4.
  CHECK(std::vector<size_t>(plan.order.begin() + s.begin, plan.order.begin() + s.split) == std::vector<size_t>{1, 2});
  CHECK(std::vector<size_t>(plan.order.begin() + s.split, plan.order.begin() + s.end) == std::vector<size_t>{3, 4, 5});
  CHECK(s.balance == doctest::Approx(1.0));
  CHECK(plan.order[6] == 6);
  CHECK(plan.order[7] == 7);
  CHECK(plan.order[0] == 0);
}

TEST_CASE("branch plan: a chain, a residual block and a lopsided or unmovable fork stay in turn") {
  // A chain: nothing to split.
  CHECK(PlanBranches({BranchStep({0}, {1}), BranchStep({1}, {2}), BranchStep({2}, {3}), BranchStep({3}, {4})}, 0.5).sections.empty());
  // Residual: v1 -> B -> C -> Add(v3, v1): one chain beside nothing.
  CHECK(PlanBranches({BranchStep({0}, {1}), BranchStep({1}, {2}), BranchStep({2}, {3}), BranchStep({3, 1}, {4})}, 0.5).sections.empty());
  // Two branches of cost 9 and 1: the lighter lane holds 1/9 of the heavier's.
  const std::vector<BranchStepFacts> lopsided = {BranchStep({0}, {1}), BranchStep({1}, {2}, 9), BranchStep({1}, {3}, 1), BranchStep({2, 3}, {4})};
  CHECK(PlanBranches(lopsided, 0.5).sections.empty());
  CHECK(PlanBranches(lopsided, 0.1).sections.size() == 1);
  std::vector<BranchStepFacts> pinned = {BranchStep({0}, {1}), BranchStep({1}, {2}), BranchStep({1}, {3}), BranchStep({2, 3}, {4})};
  CHECK(PlanBranches(pinned, 0.5).sections.size() == 1);
  pinned[2].movable = false;
  CHECK(PlanBranches(pinned, 0.5).sections.empty());
}

TEST_CASE("branch plan: two towers from the model's inputs to its two outputs, no join, are two lanes") {
  // v0, v1 inputs; 0: v2 = A(v0), 1: v3 = B(v1), 2: v4 = C(v2), 3: v5 = D(v3); v4 and v5 are outputs.
  const BranchPlan plan = PlanBranches({BranchStep({0}, {2}), BranchStep({1}, {3}), BranchStep({2}, {4}), BranchStep({3}, {5})}, 0.5);
  REQUIRE(plan.sections.size() == 1);
  CHECK(plan.order == std::vector<size_t>{0, 2, 1, 3});
  CHECK(plan.sections[0].split == 2);
}

TEST_CASE("branch plan: TILEBANK_BRANCHES is on or off") {
  BranchMode mode = BranchMode::kOn;
  CHECK(ParseBranchMode("", &mode));
  CHECK(mode == BranchMode::kOff);
  CHECK(ParseBranchMode("on", &mode));
  CHECK(mode == BranchMode::kOn);
  CHECK_FALSE(ParseBranchMode("yes", &mode));
}

}  // namespace
}  // namespace tilebank::engine::model
