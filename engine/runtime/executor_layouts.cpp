#include "engine/runtime/executor.h"

#include <cstdlib>

#include "engine/runtime/executor_step.h"
#include "engine/runtime/layout_plan.h"

namespace tilebank::engine::model {

bool HandOverNativeLayouts() {
  const char* env = std::getenv("TILEBANK_MODEL_LAYOUTS");
  return !env || std::string(env) != "row-major";
}

Status Executor::HandOverLayouts() {
  std::vector<LayoutStep> facts(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    LayoutStep& f = facts[i];
    f.kind = s.kind == Step::Kind::kAlias                                        ? LayoutStep::Kind::kAlias
             : s.kind == Step::Kind::kArena || s.kind == Step::Kind::kDirect ? LayoutStep::Kind::kLayoutKernel
                                                                              : LayoutStep::Kind::kOther;
    f.node = bindings_[i].node;
    f.inputs = s.inputs;
    f.output = s.output;
    f.pointwise = pointwise_[i];
    if (s.kind == Step::Kind::kDirect) {
      f.converts = s.kernel->ConvertsLayouts();
      f.native_output = s.kernel->NativeLayout(-1);
      f.narrow_output = s.kernel->NarrowLayout(-1);
      for (size_t k = 0; k < s.inputs.size(); ++k) {
        f.native_inputs.push_back(s.kernel->NativeLayout(static_cast<int>(k)));
        f.narrow_inputs.push_back(s.kernel->NarrowLayout(static_cast<int>(k)));
      }
    }
  }
  LayoutPlan plan = PlanLayouts(graph_, facts, HandOverNativeLayouts());
  layout_of_ = std::move(plan.layout_of);
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    if (s.output >= 0) bindings_[i].layout = layout_of_[s.output].name;
    if (plan.family_kernels[i]) {  // data movement or per-channel work in its group's family
      s.kind = Step::Kind::kDirect;
      s.kernel = std::move(plan.family_kernels[i]);
      s.inputs = plan.family_inputs[i];
      s.in_place_input = -1;
      bindings_[i].template_id = "impl.onednn";
      bindings_[i].policy = "layout=" + plan.family[i];
      TB_RETURN_IF_ERROR(UseNarrowFamilyLayouts(s).WithContext("node '" + bindings_[i].name + "'"));
      continue;
    }
    if (plan.agnostic[i] || s.kind != Step::Kind::kDirect) continue;
    if (s.kernel->ConvertsLayouts()) {
      TB_RETURN_IF_ERROR(UseGivenLayouts(s).WithContext("node '" + bindings_[i].name + "'"));
      continue;
    }
    TB_RETURN_IF_ERROR(UseHandedLayouts(s).WithContext("node '" + bindings_[i].name + "'"));
  }
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i]->kind == Step::Kind::kDirect) TB_RETURN_IF_ERROR(steps_[i]->kernel->FinishLayouts().WithContext("node '" + bindings_[i].name + "'"));
  return Status::Ok();
}

Status Executor::UseHandedLayouts(Step& s) {
  std::vector<bool> handed(s.inputs.size(), false), narrow(s.inputs.size(), false);
  bool any = false, any_narrow = false;
  // Whether value `v` comes (goes, k = -1) in the kernel's native layout, or its narrow one.
  auto check = [&](int v, int k, bool* is_narrow) -> Result<bool> {
    if (v < 0 || layout_of_[v].row_major()) return false;
    const HandoverLayout& layout = layout_of_[v];
    *is_narrow = layout.key == s.kernel->NarrowLayout(k).key;
    if (!*is_narrow && layout.key != s.kernel->NativeLayout(k).key)
      return Status::InvalidInput(std::string("it does not ") + (k < 0 ? "write" : "read") + " the layout its neighbours hand over (" + layout.name + ")");
    return true;
  };
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    bool is_narrow = false;
    auto h = check(s.inputs[k], static_cast<int>(k), &is_narrow);
    if (!h.ok()) return h.status();
    any |= handed[k] = h.value();
    any_narrow |= narrow[k] = is_narrow;
  }
  bool narrow_output = false;
  auto handed_output = check(s.output, -1, &narrow_output);
  if (!handed_output.ok()) return handed_output.status();
  if (!any && !handed_output.value()) return Status::Ok();
  if (any_narrow || narrow_output) TB_RETURN_IF_ERROR(s.kernel->UseNarrowLayouts(narrow, narrow_output));
  return s.kernel->UseNativeLayouts(handed, handed_output.value());
}

Status Executor::UseNarrowFamilyLayouts(Step& s) {
  std::vector<bool> narrow;
  bool any = false;
  for (int v : s.inputs) {
    narrow.push_back(v >= 0 && layout_of_[v].narrow);
    any |= narrow.back();
  }
  const bool narrow_output = s.output >= 0 && layout_of_[s.output].narrow;
  if (!any && !narrow_output) return Status::Ok();
  return s.kernel->UseNarrowLayouts(narrow, narrow_output);
}

Status Executor::UseGivenLayouts(Step& s) {
  std::vector<HandoverLayout> inputs;
  bool any = false;
  for (int v : s.inputs) {
    inputs.push_back(v >= 0 && !graph_.IsConstant(v) ? layout_of_[v] : HandoverLayout{});
    any |= !inputs.back().row_major();
  }
  const HandoverLayout output = s.output >= 0 ? layout_of_[s.output] : HandoverLayout{};
  if (!any && output.row_major()) return Status::Ok();  // row-major: as it was bound
  return s.kernel->UseGivenLayouts(inputs, output);
}

}  // namespace tilebank::engine::model
