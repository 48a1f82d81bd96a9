// Einsum written as a batched matrix product ("bhid,bhjd->bhij", as torchvision's MaxViT and many
// attention layers write it) becomes Transpose and MatMul nodes before ONNX's passes: ONNX 1.12's
// shape inference does not read such equations, and the executor runs MatMul.
#pragma once
#include <onnx/onnx_pb.h>

namespace tilebank::engine::model {

// Rewrites every two-input Einsum of `graph` whose equation is a batched matrix product in any
// order of its letters: every letter of both inputs and the output a batch letter, one letter of
// the first input and the output alone (rows), one of the second and the output (columns) and one
// of both inputs alone (contracted), as "bhid,bhjd->bhij" or a graph attention's "hij,jhf->ihf".
// Each input is transposed to [batch..., rows, contracted] / [batch..., contracted, columns] where
// it is not so already, and the MatMul's result to the output's order. Other Einsums (ellipses,
// repeated letters, letters summed over one input, groups of several letters) stay as they are.
// Returns how many were rewritten.
int LowerEinsums(onnx::GraphProto* graph);

}  // namespace tilebank::engine::model
