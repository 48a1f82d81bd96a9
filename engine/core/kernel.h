// A runnable implementation of one operator instance under one policy.
// Timing covers Run() only. Prepare() is where weights are packed and activations are put in the
// kernel's working layout (a Format policy's layout is what neighbouring ops hand over in a
// deployed model, so converting into it is not charged to the kernel); Fetch() converts back.
#pragma once
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "base/status.h"

namespace tilebank::engine {

// A layout other than row-major in which a kernel reads or writes a run-time tensor, that the model
// executor hands from one kernel to the next without converting it (engine/runtime/executor.h).
// Equal keys mean the same bytes hold the same tensor; `floats` is the memory it takes (a blocked
// layout pads its channels); `name` is for people ("nChw16c").
struct HandoverLayout {
  std::string key, name;
  int64_t floats = 0;
  bool narrow = false;  // bfloat16 elements (Kernel::NarrowLayout); float32 otherwise
  bool row_major() const { return key.empty(); }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Inputs as the op describes them (row-major, in the described shapes).
  virtual Status Prepare(const std::vector<const Tensor*>& inputs) = 0;
  virtual Status Run() = 0;
  // The op's output, row-major in the described shape.
  virtual Status Fetch(Tensor* output) = 0;

  // Model execution (engine/runtime/executor.h) over the executor's own memory. BindDirect runs once
  // at load: `shapes` are the op's input shapes, `constants[i]` the value of input i when it never
  // changes (weights; nullptr otherwise), which is put into the kernel's working layout here and
  // never again. It returns false when this kernel has no direct path; the executor then runs it
  // through Prepare/Run/Fetch. After true, RunDirect reads the non-constant inputs as row-major
  // memory (`inputs[i]`, nullptr for constants) and writes the output row-major to `output`,
  // copying only where the policy's layout differs from row-major.
  virtual Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) {
    (void)shapes, (void)constants;
    return false;
  }
  virtual Status RunDirect(const std::vector<const float*>& inputs, float* output) {
    (void)inputs, (void)output;
    return Status::InvalidInput("this kernel has no direct path");
  }
  // After BindDirect: whether RunDirect converts a run-time input or the output between row-major
  // and the policy's layout on every run (a Format policy whose layout its neighbours do not keep).
  virtual bool ConvertsActivations() const { return false; }
  // The input whose memory the output may be placed over (RunDirect reads it whole before writing
  // any of the output), or -1.
  virtual int InPlaceInput() const { return -1; }
  // After BindDirect: the layout in which this kernel reads run-time input `input` (the output when
  // -1) fastest, with no conversion, when that is not row-major (an empty key otherwise).
  virtual HandoverLayout NativeLayout(int input) const {
    (void)input;
    return {};
  }
  // From now on RunDirect reads input i in NativeLayout(i) where `inputs[i]`, and writes the output
  // in NativeLayout(-1) when `output`; everything else stays row-major.
  virtual Status UseNativeLayouts(const std::vector<bool>& inputs, bool output) {
    (void)inputs, (void)output;
    return Status::InvalidInput("this kernel hands over row-major tensors only");
  }
  // After BindDirect: NativeLayout(input) (the output when -1) with bfloat16 elements, where this
  // kernel computes in bf16 and reads (writes) that with no conversion; empty otherwise. The layout
  // plan hands a value over so ("narrow") only where its writer and every reader take it so.
  virtual HandoverLayout NarrowLayout(int input) const {
    (void)input;
    return {};
  }
  // Before UseNativeLayouts: of the values handed over, these inputs (and the output when `output`)
  // come in NarrowLayout.
  virtual Status UseNarrowLayouts(const std::vector<bool>& inputs, bool output) {
    (void)inputs, (void)output;
    return Status::InvalidInput("this kernel hands over float32 tensors only");
  }
  // After BindDirect: whether RunDirect takes its run-time inputs and writes its output in whatever
  // layouts its neighbours hand over, converting to and from its own (UseGivenLayouts): the layout
  // plan then leaves its values to them.
  virtual bool ConvertsLayouts() const { return false; }
  // From now on RunDirect reads run-time input i in `inputs[i]` and writes the output in `output`
  // (row-major where a key is empty).
  virtual Status UseGivenLayouts(const std::vector<HandoverLayout>& inputs, const HandoverLayout& output) {
    (void)inputs, (void)output;
    return Status::InvalidInput("this kernel converts no layouts");
  }
  // After the layout plan has told the kernel what it hands over (UseNativeLayouts, UseGivenLayouts,
  // or neither: row-major), once: the kernel finishes binding for those layouts (a convolution that
  // bound its own layouts for the plan to see, and runs faster on row-major ones alone, binds those
  // now). The executor calls it for every direct step. Nothing by default.
  virtual Status FinishLayouts() { return Status::Ok(); }
  // After binding and the layouts: what this kernel runs, such that two kernels of one operator
  // with the same identity run the same code on the same layouts (oneDNN's implementation and
  // memory formats, an own kernel's algorithm); "" when unknown. A tuning candidate identical to
  // the kernel a model runs already is no alternative to it.
  virtual std::string Identity() const { return ""; }
  // Whether RunDirect may run on another thread than the one that bound it, at the same time as
  // another kernel's RunDirect, computing serially there (inside an OpenMP region): it keeps no
  // per-thread state from binding (oneDNN's library scratchpad) and starts no threads of its own.
  // The executor runs independent branches side by side only over such kernels (branch_plan.h).
  virtual bool RunsOnAnyThread() const { return false; }
};

}  // namespace tilebank::engine
