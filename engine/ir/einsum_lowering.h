// Einsum written as a batched matrix product ("bhid,bhjd->bhij", as torchvision's MaxViT and many
// attention layers write it) becomes Transpose and MatMul nodes before ONNX's passes: ONNX 1.12's
// shape inference does not read such equations, and the executor runs MatMul.
#pragma once
#include <onnx/onnx_pb.h>

namespace tilebank::engine::model {

// Rewrites every two-input Einsum of `graph` whose equation is a batched matrix product (the same
// leading batch letters on both inputs and the output, one letter contracted, the output's last
// two letters the rows of the first input and the columns of the second). Other Einsums stay as
// they are. Returns how many were rewritten.
int LowerEinsums(onnx::GraphProto* graph);

}  // namespace tilebank::engine::model
