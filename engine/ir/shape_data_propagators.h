// Shape arithmetic ONNX 1.12's shape inference does not follow. Its data propagation carries the
// integer values computed from Shape (Shape, Gather, Slice, Concat, Add, Sub, Mul, Cast, ...), but
// not through Div, Mod, Max, Min, Identity, Equal or Where (torch.onnx's `x.size(1) // k` is a Div
// of a Shape), nor through Reshape, Transpose, ConstantOfShape or a Slice of more than one axis,
// nor into the output shapes of Range, Slice, Pad and Resize (its sizes) where an input they read is
// computed rather than an initializer (torch.onnx's F.pad reverses its pads through a 2-D Reshape, Slice and
// Transpose; Swin-T's windows pad, range and expand so; ConstantOfShape and Expand read propagated
// values themselves). The shapes after such a node stayed unknown
// until constant folding had folded it and shape inference had run over the whole model again
// (engine/ir/onnx_import.cpp's rounds: 15 of them for Swin-T, 4.6 of its 5 s load). These ops gain
// data propagators of integer values, and those three a fallback after their own inference function
// that reads the propagated values, registered on the schemas of the executor's opset.
#pragma once

namespace tilebank::engine::model {

// Registers the propagators once per process (libonnx's schema registry is process-wide); idempotent.
void RegisterShapeDataPropagators();

}  // namespace tilebank::engine::model
