// The registry's reference implementation of a tuned operator, run from its description: what the
// runner checks every tuning candidate against (and the int8 ops' through QuantizedReference). The
// description's spelling is mapped onto the ONNX node the registry knows: BatchMatMul and a MatMul
// with transpose_a / transpose_b are a MatMul of the transposed operands; Clip's min and max
// attributes are Clip's before opset 11; every other op at the opset tilebank converts models to,
// or the first that defines it (Gelu: 20).
#pragma once
#include <vector>

#include "engine/core/op_spec.h"
#include "engine/core/tensor.h"
#include "base/status.h"

namespace tilebank::engine::kernels {

// The reference kernel's first output on float32 `inputs` (one per described input), in the
// description's output shape; kInvalidInput naming the op when the registry has no reference of it
// or the shapes contradict the description.
Result<Tensor> ReferenceOf(const OpSpec& op, const std::vector<const Tensor*>& inputs);

}  // namespace tilebank::engine::kernels
