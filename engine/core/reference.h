// Reference implementations: plain loops in double precision, written for clarity, used to check
// every candidate kernel's output. Inputs and output are row-major in the described shapes.
#pragma once
#include <vector>

#include "engine/core/op_spec.h"
#include "engine/core/tensor.h"

namespace tilebank::engine {

Result<Tensor> ReferenceCompute(const OpSpec& op, const std::vector<const Tensor*>& inputs);

// Numpy-style broadcast of shapes; false when they do not broadcast.
bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out);

}  // namespace tilebank::engine
