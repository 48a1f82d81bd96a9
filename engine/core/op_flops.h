// Floating-point operations of one operator instance, counted as the anchors count them: 2 per
// multiply-add of Conv, FusedConv, ConvTranspose (1 to 3 spatial axes), MatMul, Gemm and
// BatchMatMul; other operators count 0 (their cost is memory).
#pragma once
#include "engine/core/op_spec.h"

namespace tilebank::engine {

double OpFlops(const OpSpec& op);

}  // namespace tilebank::engine
