// Einsum ("bhid,bhjd->bhij" as torchvision's MaxViT and many attention layers write it, the
// three-operand products of linear attention) becomes Transpose, MatMul, Mul and ReduceSum nodes
// before ONNX's passes: ONNX 1.12's shape inference does not read such equations, and the executor
// runs MatMul on its fast kernels where the Einsum kernel loops in double.
#pragma once
#include <onnx/onnx_pb.h>

namespace tilebank::engine::model {

// Rewrites every Einsum of `graph` (ONNX opset `opset`, which decides how Unsqueeze, Squeeze and
// ReduceSum take their axes) whose equation names each axis by a letter, once per operand, as
// nodes that compute it: the operands contracted left to right, each pair as a MatMul over
// [batch..., rows, contracted] x [..., contracted, columns] (further row and column letters
// broadcast like batch letters, several contracted letters merged by a Reshape) or a broadcast Mul
// where the two share no summed letter; letters a single operand alone sums over by ReduceSum; the
// output transposed to the equation's order. An implicit output ("ij,jk") is the letters seen once,
// alphabetically. Einsums with ellipses, a letter repeated within one operand (diagonals), or an
// operand the graph declares an 8- or 16-bit integer (which MatMul does not take) stay as they
// are, for the Einsum kernel. Returns how many were rewritten.
int LowerEinsums(onnx::GraphProto* graph, int opset);

}  // namespace tilebank::engine::model
