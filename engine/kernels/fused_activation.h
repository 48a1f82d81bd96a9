// The activations tilebank's fused ops run after their product (FusedGemm, FusedConv: written by
// engine/passes/dynamic_gemm_fusion.h and conv_epilogue_fusion.h), named as the passes' matchers
// name them: "" (none), Relu, Sigmoid, Tanh, Gelu (erf), GeluTanh, Swish (SiLU).
#pragma once
#include <string>

#include <dnnl.hpp>

namespace tilebank::engine::kernels {

bool KnownFusedActivation(const std::string& activation);

// The activation of one value, in double (the reference kernels').
double ApplyFusedActivation(const std::string& activation, double v);

// Appends the activation to `ops` as oneDNN's eltwise post-op (nothing for "").
void AppendFusedActivation(const std::string& activation, dnnl::post_ops* ops);

}  // namespace tilebank::engine::kernels
