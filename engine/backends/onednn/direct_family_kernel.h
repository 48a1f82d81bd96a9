// The base of the layout family's kernels of our own (per_channel_in_family.h, resize_in_family.h,
// ...): they run only on a model's direct path (Kernel::RunDirect, handed the executor's buffers in
// the family's layout); the tensor entry points refuse.
#pragma once
#include <vector>

#include "engine/core/kernel.h"

namespace tilebank::engine {

class DirectFamilyKernel : public Kernel {
 public:
  Status Prepare(const std::vector<const Tensor*>&) override { return Unsupported(); }
  Status Run() override { return Unsupported(); }
  Status Fetch(Tensor*) override { return Unsupported(); }

 protected:
  static Status Unsupported() { return Status::InvalidInput("a layout-family kernel runs only on a model's direct path"); }
};

}  // namespace tilebank::engine
