// A runnable implementation of one operator instance under one policy.
// Timing covers Run() only. Prepare() is where weights are packed and activations are put in the
// kernel's working layout (a Format policy's layout is what neighbouring ops hand over in a
// deployed model, so converting into it is not charged to the kernel); Fetch() converts back.
#pragma once
#include <vector>

#include "engine/ops/tensor.h"
#include "repo/status.h"

namespace tilebank::engine {

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Inputs as the op describes them (row-major, in the described shapes).
  virtual Status Prepare(const std::vector<const Tensor*>& inputs) = 0;
  virtual Status Run() = 0;
  // The op's output, row-major in the described shape.
  virtual Status Fetch(Tensor* output) = 0;

  // Model execution (engine/model/executor.h) over the executor's own memory. BindDirect runs once
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
};

}  // namespace tilebank::engine
