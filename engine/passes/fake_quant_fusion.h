// A QuantizeLinear whose only reader is a DequantizeLinear of the same per-tensor scale and zero
// point, on a float32 activation of static shape (torch.onnx's fake-quant export writes one after
// each convolution and each BatchNormalization its QDQ fusion cannot take), becomes one
// FakeQuantizeLinear node: tilebank's own op, QuantizeLinear's inputs, y = (saturate(round(x /
// scale) + zero_point) - zero_point) * scale with the zero point's 8-bit range, bit for bit what
// the pair computes. Its kernel is one float pass in the arena (engine/kernels/
// float32_arena_kernels.cpp); the pair ran on the registry's typed kernels, each with a copy of
// its tensor out of the arena or into it. Runs after constant folding (weights' pairs are folded).
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place; returns how many pairs it fused.
size_t FuseFakeQuantize(Graph* graph);

}  // namespace tilebank::engine::model
