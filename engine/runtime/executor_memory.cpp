#include "engine/runtime/executor.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/runtime/executor_step.h"

namespace tilebank::engine::model {

namespace {

constexpr int64_t kAlignFloats = 16;  // 64-byte aligned tensors

}  // namespace

void Executor::PlanMemory() {
  const int values = static_cast<int>(graph_.values.size());
  storage_of_.assign(values, -1);
  std::vector<int64_t> size, first, last;
  auto new_storage = [&](int v, int64_t when) {
    storage_of_[v] = static_cast<int>(size.size());
    const int64_t floats = std::max(Tensor::NumElements(graph_.values[v].shape), layout_of_[v].floats);
    size.push_back((floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats);
    first.push_back(when);
    last.push_back(when);
  };
  // The last step that reads each value's memory (reshapes share it), for writing in place.
  const int64_t end = static_cast<int64_t>(steps_.size());
  std::vector<int> group(values);
  for (int v = 0; v < values; ++v) group[v] = v;
  for (const auto& s : steps_)
    if (s->kind == Step::Kind::kAlias && s->output >= 0) group[s->output] = group[s->inputs[0]];
  std::vector<int64_t> group_last(values, -1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int v : steps_[i]->inputs)
      if (v >= 0) group_last[group[v]] = std::max<int64_t>(group_last[group[v]], i);
  for (int v : graph_.outputs) group_last[group[v]] = end;
  for (int v : graph_.inputs)
    if (InArena(v)) new_storage(v, -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    for (int v : s.inputs)
      if (v >= 0 && storage_of_[v] >= 0) last[storage_of_[v]] = std::max<int64_t>(last[storage_of_[v]], i);
    if (s.kind == Step::Kind::kRegistry) {  // its float32 outputs in the arena; the rest are TypedTensors
      for (int v : s.outputs)
        if (InArena(v)) new_storage(v, static_cast<int64_t>(i));
      continue;
    }
    if (s.output < 0) continue;
    if (s.kind == Step::Kind::kAlias) {
      storage_of_[s.output] = storage_of_[s.inputs[0]];
      continue;
    }
    // A pointwise op writes over an input of its shape that nothing reads afterwards: the lines it
    // reads are the lines it writes, and no new memory is touched.
    // Only the first operand: libraries support in-place computation over it (oneDNN's src0).
    // A kernel may name another input it reads whole before writing (a fused residual).
    int in_place = -1;
    const int first = pointwise_[i] && !s.inputs.empty() ? s.inputs[0]
                      : s.in_place_input >= 0 && s.in_place_input < static_cast<int>(s.inputs.size()) ? s.inputs[s.in_place_input] : -1;
    // A kernel's named input must be the only one in that memory: the anchor of a fused step reads
    // its other inputs while it writes (Conv(x) + x).
    bool shared = false;
    if (!pointwise_[i] && first >= 0)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        shared |= static_cast<int>(k) != s.in_place_input && s.inputs[k] >= 0 && storage_of_[s.inputs[k]] >= 0 &&
                  storage_of_[s.inputs[k]] == storage_of_[first];
    if (first >= 0 && !shared && storage_of_[first] >= 0 && group_last[group[first]] == static_cast<int64_t>(i) &&
        graph_.values[first].shape == graph_.values[s.output].shape && layout_of_[first].key == layout_of_[s.output].key)
      in_place = first;
    if (in_place >= 0) storage_of_[s.output] = storage_of_[in_place];
    else new_storage(s.output, static_cast<int64_t>(i));
  }
  for (int v : graph_.outputs)
    if (storage_of_[v] >= 0) last[storage_of_[v]] = static_cast<int64_t>(steps_.size());
  // Largest first, each at the lowest offset free over its lifetime.
  std::vector<int> order(size.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return size[a] != size[b] ? size[a] > size[b] : a < b; });
  storage_offset_.assign(size.size(), 0);
  std::vector<int> placed;
  arena_floats_ = 0;
  for (int s : order) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int p : placed)
      if (first[p] <= last[s] && first[s] <= last[p]) busy.push_back({storage_offset_[p], storage_offset_[p] + size[p]});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + size[s] <= lo) break;
      offset = std::max(offset, hi);
    }
    storage_offset_[s] = offset;
    arena_floats_ = std::max(arena_floats_, offset + size[s]);
    placed.push_back(s);
  }
}

float* Executor::Address(int value) {
  if (value < 0) return nullptr;
  if (storage_of_[value] < 0) return constant_data_[value].empty() ? nullptr : constant_data_[value].data();
  return arena_.get() + storage_offset_[storage_of_[value]];
}

}  // namespace tilebank::engine::model
