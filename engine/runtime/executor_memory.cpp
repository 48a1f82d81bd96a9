#include "engine/runtime/executor.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/runtime/executor_step.h"
#include "engine/runtime/memory_plan.h"

namespace tilebank::engine::model {

void Executor::PlanMemory() {
  std::vector<StepValues> steps;
  steps.reserve(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    StepValues v;
    v.kind = s.kind == Step::Kind::kAlias ? StepValues::Kind::kAlias : s.kind == Step::Kind::kRegistry ? StepValues::Kind::kRegistry : StepValues::Kind::kOther;
    v.inputs = s.inputs;
    v.output = s.output;
    v.outputs = s.outputs;
    v.pointwise = pointwise_[i];
    v.in_place_input = s.in_place_input;
    steps.push_back(std::move(v));
  }
  ValueNeeds needs;
  needs.in_arena = [this](int v) { return InArena(v); };
  needs.floats = [this](int v) { return layout_of_[v].floats; };
  needs.layout_key = [this](int v) { return layout_of_[v].key; };
  MemoryPlan plan = model::PlanMemory(graph_, steps, needs, side_by_side_);
  storage_of_ = std::move(plan.storage_of);
  storage_offset_ = std::move(plan.offset);
  arena_floats_ = plan.floats;
}

float* Executor::Address(int value) {
  if (value < 0) return nullptr;
  if (storage_of_[value] < 0) return constant_data_[value].empty() ? nullptr : constant_data_[value].data();
  return arena_ + storage_offset_[storage_of_[value]];
}

bool Executor::ReadsTyped(const Step& s, int value) const {
  return value >= 0 && s.kind == Step::Kind::kArena && not_float32_[value];
}

const float* Executor::StepInput(const Step& s, int value) {
  return ReadsTyped(s, value) ? reinterpret_cast<const float*>(typed_[value].bytes.data()) : Address(value);
}

}  // namespace tilebank::engine::model
