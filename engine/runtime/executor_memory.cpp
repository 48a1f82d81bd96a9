#include "engine/runtime/executor.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/runtime/branch_plan.h"
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

void Executor::PlanTypedSlots() {
  const size_t values = graph_.values.size();
  typed_slot_of_.assign(values, -1);
  typed_slots_.clear();
  typed_release_after_.assign(steps_.size(), {});
  std::vector<int64_t> first(values, -1), last(values, -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    if (s.kind == Step::Kind::kRegistry)
      for (int v : s.outputs)
        if (v >= 0 && !InArena(v) && !graph_.IsConstant(v) && graph_.values[v].kind == ValueKind::kTensor && first[v] < 0) first[v] = static_cast<int64_t>(i);
    for (int v : s.inputs)
      if (v >= 0) last[v] = static_cast<int64_t>(i);
  }
  for (int v : graph_.outputs) first[v] = -1;  // handed to the caller
  std::vector<int> slotted;
  for (size_t v = 0; v < values; ++v) {
    if (first[v] < 0) continue;
    last[v] = std::max(last[v], first[v]);  // read by no step: back in its slot once computed
    for (const BranchSection& b : side_by_side_)
      if (first[v] < static_cast<int64_t>(b.end) && last[v] >= static_cast<int64_t>(b.begin)) {
        first[v] = std::min<int64_t>(first[v], static_cast<int64_t>(b.begin));
        last[v] = std::max<int64_t>(last[v], static_cast<int64_t>(b.end) - 1);
      }
    slotted.push_back(static_cast<int>(v));
  }
  std::sort(slotted.begin(), slotted.end(), [&](int a, int b) { return first[a] != first[b] ? first[a] < first[b] : a < b; });
  std::vector<int64_t> busy_until;  // slot -> the last step its current value is read in
  for (int v : slotted) {
    size_t slot = 0;
    while (slot < busy_until.size() && busy_until[slot] >= first[v]) ++slot;
    if (slot == busy_until.size()) busy_until.push_back(-1);
    busy_until[slot] = last[v];
    typed_slot_of_[v] = static_cast<int>(slot);
    typed_release_after_[static_cast<size_t>(last[v])].push_back(v);
  }
  typed_slots_.resize(busy_until.size());
}

void Executor::ReleaseTypedAfter(size_t i) {
  if (i >= typed_release_after_.size()) return;
  for (int v : typed_release_after_[i]) {
    typed_slots_[static_cast<size_t>(typed_slot_of_[v])] = std::move(typed_[v]);
    typed_[v] = TypedTensor();
  }
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
