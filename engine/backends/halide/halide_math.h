// Elementwise functions as Halide expressions, shared by elementwise.generic and SGAT's fused
// Halide epilogues: vectorizable rational fits for erf and tanh, and the activations built on them.
#pragma once
#include <Halide.h>

#include <string>

namespace tilebank::engine {

// Within 4e-8 of erf in exact arithmetic, 3e-7 evaluated in float.
Halide::Expr Erf(Halide::Expr x);
// Within 1e-10 of tanh in exact arithmetic, 3e-7 evaluated in float.
Halide::Expr Tanh(Halide::Expr x);
// `op_type` of x: Relu, LeakyRelu (slope alpha), Clip (bounds alpha, beta), Sigmoid, Tanh, Erf,
// HardSigmoid (max(0, min(1, alpha x + beta))), HardSwish (x HardSigmoid(x) with 1/6, 1/2), Swish (x Sigmoid(x), SiLU), Gelu
// (the erf form) and GeluTanh (Gelu's tanh approximation). Throws std::invalid_argument for another type.
Halide::Expr Activation(const std::string& op_type, Halide::Expr x, float alpha = 0, float beta = 0);

}  // namespace tilebank::engine
