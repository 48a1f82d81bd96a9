// The com.microsoft quantized operators ONNX Runtime's quantizer writes in its QOperator format
// (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool,
// QLinearAveragePool, QLinearConcat, QLinearReduceMean, QLinearWhere, QGemm, and its own
// QuantizeLinear and DequantizeLinear) become what each computes in the ONNX domain before ONNX's
// passes: DequantizeLinear of each quantized input, the float operator, QuantizeLinear of the result
// with the output's scale and zero point. ONNX's checker and shape inference then read the whole
// model, and the QDQ fusion (engine/passes/qdq_fusion.h) puts the int8 kernels back where it has
// them (a residual QLinearAdd, GEMMs), the rest running in float32 between 8-bit tensors, as the
// model's own DequantizeLinear and QuantizeLinear nodes would. QLinearConv and QLinearMatMul are
// ONNX's own and stay. A com.microsoft node of another type, or of an attribute this does not
// lower (QLinearAveragePool with channels_last, QLinearSoftmax below opset 13 on an inner axis),
// stays, and the import refuses it by name.
#pragma once
#include <onnx/onnx_pb.h>

namespace tilebank::engine::model {

// Rewrites `model`'s graph; drops the com.microsoft opset import when no node of that domain is
// left. Returns how many nodes were lowered.
int LowerContribQuantizedOps(onnx::ModelProto* model);

}  // namespace tilebank::engine::model
