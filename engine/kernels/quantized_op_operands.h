// A QLinearConv or QLinearMatMul (the QDQ fusion's int8 nodes, engine/passes/qdq_fusion.h) run from
// its description alone, as OPAT runs every operator: shapes and dtypes, no values. The runner's
// random floats in [-1, 1] are made into what such a node reads: 8-bit activations spread over
// their range, symmetric int8 weights (even ones where the kernels halve them, which is then exact), positive scales that keep the outputs within range, the zero
// points the description flags as used ("x_zero_point_nonzero", "y_zero_point_nonzero": oneDNN
// takes another path with them) and an int32 bias. Outputs are compared and fetched as floats
// holding the quantized integers.
#pragma once
#include <string>
#include <vector>

#include "engine/kernels/op_kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/tensor.h"

namespace tilebank::engine::kernels {

// The registry kernel's making for `op` with oneDNN implementation `implementation` ("" for
// oneDNN's first choice, "reference" for the registry's reference kernel).
KernelInfo QuantizedKernelInfo(const OpSpec& op, const std::string& implementation);
// The node's operands made from the runner's floats (one per described input). Where `floats` has
// none for x, w or the bias (it is shorter), that operand stays zeros: for a caller that needs only
// the shapes, dtypes, scales and zero points (which implementations oneDNN offers), at no cost per weight.
std::vector<TypedTensor> QuantizedOperands(const OpSpec& op, const std::vector<const Tensor*>& floats);
// The reference kernel's output for those operands, as floats.
Result<Tensor> QuantizedReference(const OpSpec& op, const std::vector<const Tensor*>& floats);

}  // namespace tilebank::engine::kernels
