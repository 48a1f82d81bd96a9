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
};

}  // namespace tilebank::engine
