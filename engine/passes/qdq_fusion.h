// QDQ models on int8 kernels: a quantized operator written as DequantizeLinear -> Conv | MatMul |
// Gemm (its weights a DequantizeLinear of int8 constants, symmetric: zero points 0) -> [+ bias] ->
// [Relu | Clip] -> QuantizeLinear becomes one QLinearConv or QLinearMatMul node on the quantized tensors:
// the bias as int32 in units of x_scale * w_scale (a 9th input of QLinearMatMul, an extension of
// tilebank's), a Relu as the node's "relu" attribute (y clamped at its zero point), a Clip with
// constant bounds (ReLU6) as "clip_low" and "clip_high" (y clamped to their quantized values), Gemm's weights
// transposed to [K, N]. Those nodes run on oneDNN's int8 kernels (engine/kernels/
// onednn_qlinear_kernels.cpp). Everything else keeps its DequantizeLinear / QuantizeLinear nodes and
// runs in float32, but for dynamically quantized MatMuls (DynamicQuantizeLinear -> MatMulInteger ->
// Cast -> Mul -> Mul [-> Add], as ONNX Runtime's dynamic quantizer and `tilebank quantize --dynamic`
// write them), which become one DynamicQuantizedMatMul on oneDNN's int8 matmul, a residual DequantizeLinear + DequantizeLinear -> Add -> [Relu] ->
// QuantizeLinear of one shape, which becomes QLinearAdd, and a MaxPool between a DequantizeLinear and a
// QuantizeLinear of the same scale and zero point, which runs on the 8-bit tensor (ONNX Runtime's contrib op, computed as
// those nodes compute it, in one pass). Runs before constant folding, which would otherwise fold the weights' dequantization.
#pragma once
#include "engine/ir/graph.h"
#include "base/status.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place; returns how many operators it fused.
Result<size_t> FuseQdq(Graph* graph);

}  // namespace tilebank::engine::model
