// impl.onednn for vector operators: Softmax (one axis), LayerNormalization (the axes from `axis`
// on, with scale and optional bias), Relu, Sigmoid, Tanh, Gelu (erf or tanh), MaxPool and
// AveragePool (1-D to 3-D, dilations, ceil_mode; no indices output), and Add, Sub,
// Mul, Div where the first input has the output's shape (oneDNN broadcasts the second only; Add
// and Mul swap their inputs when it is the first that broadcasts).
#pragma once

#include <memory>
#include <string>

#include "engine/kernel/kernel.h"
#include "engine/ops/op_spec.h"

namespace tilebank::engine {

bool OneDnnImplementsVectorOp(const std::string& op_type);
std::vector<std::string> OneDnnVectorOps();
// Ok when oneDNN runs this instance; otherwise why not.
Status OneDnnSupportsVectorOp(const OpSpec& op);
// The kernel of a supported instance (its primitive is created in Prepare).
std::unique_ptr<Kernel> OneDnnVectorKernel(const OpSpec& op);

}  // namespace tilebank::engine
