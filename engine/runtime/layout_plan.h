// The layout plan: which run-time values are handed between steps in a native (blocked) layout
// instead of row-major, and which of those in bfloat16 ("narrow": between two steps computing in
// bf16, written by the one and read by the other as they are). Values form groups (a producer, its readers, elementwise steps that compute
// the same in any layout, data movement and per-channel steps that run in a layout family); a group
// takes a native layout when every producer writes it and every reader takes it natively, and it is
// not a model input or output. The executor asks the kernels what they take and applies the plan.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backends/onednn/onednn_layout_ops.h"
#include "engine/core/kernel.h"
#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// What the plan reads of one step.
struct LayoutStep {
  enum class Kind { kAlias, kLayoutKernel, kOther } kind = Kind::kOther;  // kLayoutKernel: an arena or template kernel
  int node = -1;              // the graph node it runs
  std::vector<int> inputs;    // value per kernel input (-1: absent)
  int output = -1;
  bool pointwise = false;     // may write over an input: an elementwise step
  // kLayoutKernel with a template kernel: the layouts it writes (output) and reads (per input)
  // natively; row-major otherwise.
  HandoverLayout native_output;
  std::vector<HandoverLayout> native_inputs;
  // The same in bfloat16, where the kernel computes in bf16 and writes (reads) that as it is
  // (Kernel::NarrowLayout); empty otherwise.
  HandoverLayout narrow_output;
  std::vector<HandoverLayout> narrow_inputs;
  // A kernel that takes and writes whatever layouts its neighbours hand over (Kernel::ConvertsLayouts):
  // it constrains no group; the executor tells it the layouts the plan chose.
  bool converts = false;
};

struct LayoutPlan {
  std::vector<HandoverLayout> layout_of;  // value -> its layout (row-major: empty key)
  // Per step: a data-movement or per-channel step that runs in its group's family now, with its
  // kernel and the run-time values it reads (null: the step stays as bound).
  std::vector<std::unique_ptr<Kernel>> family_kernels;
  std::vector<std::vector<int>> family_inputs;
  std::vector<std::string> family;  // per step: that family's name
  // Per step: elementwise over same-shape inputs, so it computes the same in whatever layout its
  // group takes, without being told.
  std::vector<bool> agnostic;
};

// Builds the kernel of a step that runs in `family` (engine/backends/onednn/onednn_layout_ops.h).
using FamilyKernelBuilder = std::function<Result<std::unique_ptr<Kernel>>(const LayoutFamilyOp& op, const std::string& family)>;

// Every value row-major when `enabled` is false (TILEBANK_MODEL_LAYOUTS=row-major).
LayoutPlan PlanLayouts(const Graph& graph, const std::vector<LayoutStep>& steps, bool enabled, const FamilyKernelBuilder& build = LayoutFamilyKernel);

}  // namespace tilebank::engine::model
