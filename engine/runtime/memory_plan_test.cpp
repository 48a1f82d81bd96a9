#include <doctest/doctest.h>

#include "engine/runtime/memory_plan.h"

#include <set>

namespace tilebank::engine::model {
namespace {

// A graph of `count` values of 64 floats each; value 0 is its input, the last its output.
Graph Values(int count) {
  Graph g;
  for (int i = 0; i < count; ++i) {
    Value v;
    v.name = "v" + std::to_string(i);
    v.shape = {4, 16};
    g.values.push_back(v);
  }
  g.inputs = {0};
  g.outputs = {count - 1};
  return g;
}

StepValues Step(std::vector<int> inputs, int output, bool pointwise) {
  StepValues s;
  s.inputs = std::move(inputs);
  s.output = output;
  s.pointwise = pointwise;
  return s;
}

const ValueNeeds kEveryValue{[](int) { return true; }, [](int) { return int64_t{0}; }, [](int) { return std::string(); }};

TEST_CASE("memory plan: a pointwise step writes over the input that dies with it, and storages alive at once do not overlap") {
  const Graph g = Values(4);
  // v1 = A(v0) pointwise; v2 = B(v1); v3 = C(v2) pointwise.
  const MemoryPlan plan = PlanMemory(g, {Step({0}, 1, true), Step({1}, 2, false), Step({2}, 3, true)}, kEveryValue);
  CHECK(plan.storage_of[1] == plan.storage_of[0]);
  CHECK(plan.storage_of[2] != plan.storage_of[1]);
  CHECK(plan.storage_of[3] == plan.storage_of[2]);
  // v0/v1 and v2/v3 are both alive at step 1: two storages side by side.
  CHECK(plan.offset[plan.storage_of[0]] != plan.offset[plan.storage_of[2]]);
  CHECK(plan.floats == 128);
}

TEST_CASE("memory plan: an input read later is not written over, a storage free again is reused, an alias shares its input's") {
  const Graph g = Values(5);
  // v1 = A(v0) pointwise, but v0 is read again by the last step; v2 = alias of v1; v3 = B(v2); v4 = C(v3, v0).
  std::vector<StepValues> steps = {Step({0}, 1, true), Step({1}, 2, false), Step({2}, 3, false), Step({3, 0}, 4, false)};
  steps[1].kind = StepValues::Kind::kAlias;
  const MemoryPlan plan = PlanMemory(g, steps, kEveryValue);
  CHECK(plan.storage_of[1] != plan.storage_of[0]);
  CHECK(plan.storage_of[2] == plan.storage_of[1]);
  CHECK(plan.storage_of[3] != plan.storage_of[2]);
  // v1's storage dies at step 2, before v4 is written at step 3: v4 takes its offset.
  CHECK(plan.offset[plan.storage_of[4]] == plan.offset[plan.storage_of[1]]);
  CHECK(plan.floats == 3 * 64);
}

TEST_CASE("memory plan: side by side, no two storages a stretch touches share memory, and no step writes over a value from before it") {
  const Graph g = Values(6);
  // v1 = A(v0); lanes: [v2 = B(v1), v3 = C(v2) pointwise] beside [v4 = D(v1) pointwise]; v5 = E(v3, v4).
  const std::vector<StepValues> steps = {Step({0}, 1, false), Step({1}, 2, false), Step({2}, 3, true), Step({1}, 4, true), Step({3, 4}, 5, false)};
  const MemoryPlan in_turn = PlanMemory(g, steps, kEveryValue);
  CHECK(in_turn.storage_of[4] == in_turn.storage_of[1]);  // in turn, D writes over v1, which dies with it
  const MemoryPlan lanes = PlanMemory(g, steps, kEveryValue, {BranchSection{1, 3, 4, 1.0}});
  // D may run while B still reads v1: it writes elsewhere. C writes over v2, written in its own lane.
  CHECK(lanes.storage_of[4] != lanes.storage_of[1]);
  CHECK(lanes.storage_of[3] == lanes.storage_of[2]);
  // v1, v2 (and v3 over it) and v4 are held over the whole stretch: three places.
  std::set<int64_t> offsets;
  for (int v : {1, 2, 4}) offsets.insert(lanes.offset[lanes.storage_of[v]]);
  CHECK(offsets.size() == 3);
}

}  // namespace
}  // namespace tilebank::engine::model
