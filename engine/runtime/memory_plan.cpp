#include "engine/runtime/memory_plan.h"

#include <algorithm>

namespace tilebank::engine::model {
namespace {

constexpr int64_t kAlignFloats = 16;  // 64-byte aligned tensors

}  // namespace

MemoryPlan PlanMemory(const Graph& graph, const std::vector<StepValues>& steps, const ValueNeeds& needs,
                      const std::vector<BranchSection>& side_by_side) {
  MemoryPlan plan;
  std::vector<int>& storage_of = plan.storage_of;
  const int values = static_cast<int>(graph.values.size());
  storage_of.assign(values, -1);
  std::vector<int64_t> size, first, last;
  auto new_storage = [&](int v, int64_t when) {
    storage_of[v] = static_cast<int>(size.size());
    const int64_t floats = std::max(Tensor::NumElements(graph.values[v].shape), needs.floats(v));
    size.push_back((floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats);
    first.push_back(when);
    last.push_back(when);
  };
  // The last step that reads each value's memory (reshapes share it), for writing in place.
  const int64_t end = static_cast<int64_t>(steps.size());
  std::vector<int> group(values);
  for (int v = 0; v < values; ++v) group[v] = v;
  for (const StepValues& s : steps)
    if (s.kind == StepValues::Kind::kAlias && s.output >= 0) group[s.output] = group[s.inputs[0]];
  std::vector<int64_t> group_last(values, -1);
  for (size_t i = 0; i < steps.size(); ++i)
    for (int v : steps[i].inputs)
      if (v >= 0) group_last[group[v]] = std::max<int64_t>(group_last[group[v]], i);
  for (int v : graph.outputs) group_last[group[v]] = end;
  std::vector<int64_t> section_begin(steps.size(), -1);  // step -> the first step of its side-by-side stretch
  for (const BranchSection& b : side_by_side)
    for (size_t i = b.begin; i < b.end; ++i) section_begin[i] = static_cast<int64_t>(b.begin);
  for (int v : graph.inputs)
    if (needs.in_arena(v)) new_storage(v, -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepValues& s = steps[i];
    for (int v : s.inputs)
      if (v >= 0 && storage_of[v] >= 0) last[storage_of[v]] = std::max<int64_t>(last[storage_of[v]], i);
    if (s.kind == StepValues::Kind::kRegistry) {  // its float32 outputs in the arena; the rest are TypedTensors
      for (int v : s.outputs)
        if (needs.in_arena(v)) new_storage(v, static_cast<int64_t>(i));
      continue;
    }
    if (s.output < 0) continue;
    if (s.kind == StepValues::Kind::kAlias) {
      storage_of[s.output] = storage_of[s.inputs[0]];
      continue;
    }
    // A pointwise op writes over an input of its shape that nothing reads afterwards: the lines it
    // reads are the lines it writes, and no new memory is touched.
    // Only the first operand: libraries support in-place computation over it (oneDNN's src0).
    // A kernel may name another input it reads whole before writing (a fused residual).
    int in_place = -1;
    const int over = s.pointwise && !s.inputs.empty() ? s.inputs[0]
                     : s.in_place_input >= 0 && s.in_place_input < static_cast<int>(s.inputs.size()) ? s.inputs[s.in_place_input] : -1;
    // A kernel's named input must be the only one in that memory: the anchor of a fused step reads
    // its other inputs while it writes (Conv(x) + x).
    bool shared = false;
    if (!s.pointwise && over >= 0)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        shared |= static_cast<int>(k) != s.in_place_input && s.inputs[k] >= 0 && storage_of[s.inputs[k]] >= 0 &&
                  storage_of[s.inputs[k]] == storage_of[over];
    // Inside a side-by-side stretch, only over a value its own lane wrote there.
    const bool from_before_the_stretch = over >= 0 && storage_of[over] >= 0 && section_begin[i] >= 0 && first[storage_of[over]] < section_begin[i];
    if (over >= 0 && !shared && !from_before_the_stretch && storage_of[over] >= 0 && group_last[group[over]] == static_cast<int64_t>(i) &&
        graph.values[over].shape == graph.values[s.output].shape && needs.layout_key(over) == needs.layout_key(s.output))
      in_place = over;
    if (in_place >= 0) storage_of[s.output] = storage_of[in_place];
    else new_storage(s.output, static_cast<int64_t>(i));
  }
  for (int v : graph.outputs)
    if (storage_of[v] >= 0) last[storage_of[v]] = static_cast<int64_t>(steps.size());
  // A storage a side-by-side stretch touches is held over the whole stretch.
  for (const BranchSection& b : side_by_side)
    for (size_t k = 0; k < size.size(); ++k)
      if (first[k] < static_cast<int64_t>(b.end) && last[k] >= static_cast<int64_t>(b.begin)) {
        first[k] = std::min<int64_t>(first[k], static_cast<int64_t>(b.begin));
        last[k] = std::max<int64_t>(last[k], static_cast<int64_t>(b.end) - 1);
      }
  // Largest first, each at the lowest offset free over its lifetime.
  std::vector<int> order(size.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return size[a] != size[b] ? size[a] > size[b] : a < b; });
  plan.offset.assign(size.size(), 0);
  std::vector<int> placed;
  plan.floats = 0;
  for (int s : order) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int p : placed)
      if (first[p] <= last[s] && first[s] <= last[p]) busy.push_back({plan.offset[p], plan.offset[p] + size[p]});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + size[s] <= lo) break;
      offset = std::max(offset, hi);
    }
    plan.offset[s] = offset;
    plan.floats = std::max(plan.floats, offset + size[s]);
    placed.push_back(s);
  }
  return plan;
}

}  // namespace tilebank::engine::model
