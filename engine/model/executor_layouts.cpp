#include "engine/model/executor.h"

#include <cstdlib>
#include <map>
#include <set>

#include "engine/model/executor_step.h"
#include "engine/templates/op_template.h"

namespace tilebank::engine::model {

bool HandOverNativeLayouts() {
  const char* env = std::getenv("TILEBANK_MODEL_LAYOUTS");
  return !env || std::string(env) != "row-major";
}

Status Executor::HandOverLayouts() {
  const size_t values = graph_.values.size();
  layout_of_.assign(values, HandoverLayout{});
  if (!HandOverNativeLayouts()) return Status::Ok();
  // An elementwise step whose run-time inputs all have its output's shape (or one element) computes
  // the same in any layout of them: its inputs and output form one group that takes one layout.
  auto agnostic = [&](size_t i) {
    const Step& s = *steps_[i];
    if (!pointwise_[i] || s.output < 0) return false;
    bool same_shape_input = false;
    for (int v : s.inputs) {
      if (v < 0) continue;
      const bool same = graph_.values[v].shape == graph_.values[s.output].shape && !graph_.IsConstant(v);
      if (!same && Tensor::NumElements(graph_.values[v].shape) != 1) return false;
      same_shape_input |= same;
    }
    return same_shape_input;
  };
  std::vector<int> group(values);
  for (size_t v = 0; v < values; ++v) group[v] = static_cast<int>(v);
  std::function<int(int)> find = [&](int v) { return group[v] == v ? v : group[v] = find(group[v]); };
  std::vector<bool> is_agnostic(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    is_agnostic[i] = agnostic(i);
    if (is_agnostic[i])
      for (int v : steps_[i]->inputs)
        if (v >= 0 && graph_.values[v].shape == graph_.values[steps_[i]->output].shape) group[find(v)] = find(steps_[i]->output);
  }
  // Per group: the layout its producers write natively, and whether every reader takes it.
  struct GroupLayout {
    HandoverLayout layout;
    bool possible = true, has_agnostic = false;
    int64_t elements = 0;
  };
  std::map<int, GroupLayout> groups;
  auto refuse = [&](int v) { groups[find(v)].possible = false; };
  for (int v : graph_.inputs) refuse(v);
  for (int v : graph_.outputs) refuse(v);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    if (s.output < 0) continue;
    GroupLayout& g = groups[find(s.output)];
    g.elements = Tensor::NumElements(graph_.values[s.output].shape);
    if (is_agnostic[i]) {
      g.has_agnostic = true;
      continue;
    }
    const HandoverLayout native = s.kind == Step::Kind::kDirect ? s.kernel->NativeLayout(-1) : HandoverLayout{};
    if (native.row_major() || (!g.layout.row_major() && g.layout.key != native.key)) g.possible = false;
    else g.layout = native;
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    if (is_agnostic[i]) continue;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int v = s.inputs[k];
      if (v < 0 || graph_.IsConstant(v)) continue;
      GroupLayout& g = groups[find(v)];
      if (s.kind != Step::Kind::kDirect || s.kernel->NativeLayout(static_cast<int>(k)).key != g.layout.key) g.possible = false;
    }
  }
  // Elementwise steps see every float of the buffer: no padding.
  for (auto& [root, g] : groups)
    if (g.layout.row_major() || (g.has_agnostic && g.layout.floats != g.elements)) g.possible = false;
  for (size_t v = 0; v < values; ++v)
    if (auto it = groups.find(find(static_cast<int>(v))); it != groups.end() && it->second.possible && !graph_.IsConstant(static_cast<int>(v)))
      layout_of_[v] = it->second.layout;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    if (s.output >= 0) bindings_[i].layout = layout_of_[s.output].name;
    if (is_agnostic[i] || s.kind != Step::Kind::kDirect) continue;
    std::vector<bool> handed_inputs(s.inputs.size(), false);
    bool any = false;
    for (size_t k = 0; k < s.inputs.size(); ++k) any |= handed_inputs[k] = s.inputs[k] >= 0 && !layout_of_[s.inputs[k]].row_major();
    const bool handed_output = s.output >= 0 && !layout_of_[s.output].row_major();
    if (any || handed_output)
      TB_RETURN_IF_ERROR(s.kernel->UseNativeLayouts(handed_inputs, handed_output).WithContext("node '" + bindings_[i].name + "'"));
  }
  return Status::Ok();
}

}  // namespace tilebank::engine::model
