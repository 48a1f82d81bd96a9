// Shape arithmetic ONNX 1.12's shape inference does not follow. Its data propagation carries the
// integer values computed from Shape (Shape, Gather, Slice, Concat, Add, Sub, Mul, Cast, ...), but
// not through Div, Mod, Max, Min or Identity (torch.onnx's `x.size(1) // k` is a Div of a Shape), so
// the shapes after such a node stayed unknown until constant folding had folded it and shape
// inference had run over the whole model again (engine/ir/onnx_import.cpp's rounds). These ops gain
// data propagators of integer values, registered on the schemas of the executor's opset.
#pragma once

namespace tilebank::engine::model {

// Registers the propagators once per process (libonnx's schema registry is process-wide); idempotent.
void RegisterShapeDataPropagators();

}  // namespace tilebank::engine::model
