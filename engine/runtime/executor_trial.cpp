// The executor's in-context trials (Executor::SwapSteps): a tuning candidate in place of the steps
// running its operator, with everything around them as the model binds it.
#include <exception>

#include "engine/backends/fused_policy.h"
#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/executor_step.h"
#include "repo/key.h"

namespace tilebank::engine::model {

Result<std::vector<size_t>> Executor::SwapSteps(const std::string& op_key, const OpTemplate& t, const Policy& policy) {
  if (weights_released_) return Status::InvalidInput("this model was loaded to run only (its weights were freed as its kernels took them); load it again to try kernels in it");
  RestoreSteps();
  std::vector<size_t> swapped;
  for (size_t i = 0; i < bindings_.size(); ++i) {
    const NodeBinding& b = bindings_[i];
    if (!b.op || b.template_id.empty()) continue;
    if (FormatKey(EntryKind::kOp, b.op->op.canonical.key) != op_key) continue;
    const Step& own = *steps_[i];
    const bool fused = b.template_id == kFusedTemplateId;
    if ((fused && !own.onednn_chain) || (own.kind != Step::Kind::kDirect && own.kind != Step::Kind::kCopying)) continue;
    auto refuse = [&](const std::string& why) {
      RestoreSteps();
      return Status::InvalidInput("node '" + b.name + "': " + why);
    };
    auto trial = std::make_unique<Step>();
    trial->output = own.output;
    if (fused) {  // the anchor of a chain oneDNN runs as post-ops: only oneDNN's candidates run it so
      if (&t != &OneDnnImpl()) return refuse("the model runs it fused with " + b.op_type.substr(b.op_type.find('+') + 1) + ", " + kOnlyOneDnnRunsIt);
      auto kernel = OneDnnFusedKernel(b.op->op, *own.onednn_chain, policy);
      if (!kernel.ok()) return refuse(kernel.status().message());
      trial->inputs = own.inputs;
      if (Status s = BindKernel(trial.get(), std::move(kernel.value())); !s.ok()) return refuse(s.message());
      trial->onednn_chain = own.onednn_chain;
    } else if (Status s = BindTemplate(trial.get(), *b.op, t, policy); !s.ok()) {
      return refuse(s.message());
    }
    trial->in_place_input = trial->kind == Step::Kind::kDirect ? trial->kernel->InPlaceInput() : -1;
    // The memory plan placed the output over an input only where the model's kernel may write so.
    for (size_t k = 0; k < own.inputs.size(); ++k) {
      const int v = own.inputs[k];
      if (v >= 0 && own.output >= 0 && storage_of_[v] >= 0 && storage_of_[v] == storage_of_[own.output] && trial->in_place_input != static_cast<int>(k))
        return refuse("its output is placed over an input it does not write over");
    }
    bool any = own.output >= 0 && !layout_of_[own.output].row_major();
    for (int v : trial->inputs) any |= v >= 0 && !layout_of_[v].row_major();
    if (trial->kind == Step::Kind::kDirect && trial->kernel->ConvertsLayouts()) {
      if (Status s = UseGivenLayouts(*trial); !s.ok()) return refuse(s.message());
    } else if (any) {
      if (trial->kind != Step::Kind::kDirect) return refuse("it cannot take the layouts its neighbours hand over");
      if (Status s = UseHandedLayouts(*trial); !s.ok()) return refuse(s.message());
    }
    if (trial->kind == Step::Kind::kDirect)
      if (Status s = trial->kernel->FinishLayouts(); !s.ok()) return refuse(s.message());
    swapped_.emplace_back(i, std::move(steps_[i]));
    steps_[i] = std::move(trial);
    swapped.push_back(i);
  }
  if (swapped.empty()) return Status::InvalidInput("no step runs operator " + op_key + " alone");
  return swapped;
}

std::string Executor::SwappedIdentity() const {
  std::string id;
  for (const auto& [index, own] : swapped_) {
    std::string one;
    try {
      if (steps_[index]->kernel) one = steps_[index]->kernel->Identity();
    } catch (const std::exception&) {  // a kernel that cannot say: unknown
    }
    if (one.empty()) return "";
    id += (id.empty() ? "" : ";") + one;
  }
  return id;
}

void Executor::RestoreSteps() {
  for (auto& [index, step] : swapped_) steps_[index] = std::move(step);
  swapped_.clear();
}

}  // namespace tilebank::engine::model
