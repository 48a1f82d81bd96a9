// Activations as exporters write them in several nodes, found on a value of a graph: what SGAT's
// partition (engine/passes/partition.h) fuses into an anchor's epilogue and what the dynamic-shape
// GEMM fusion (engine/passes/dynamic_gemm_fusion.h) folds into its post-op. Each matcher returns the
// nodes of the pattern in graph order (the last writes the activation's value), or empty. A pattern
// whose intermediate values anything else reads (another node, the model's outputs) is not matched:
// fusing it would drop them.
#pragma once
#include <string>
#include <vector>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Where each value is read: node indices (a node reading it twice counts twice).
std::vector<std::vector<int>> Readers(const Graph& g);

// Whether value `v` is a constant of one element within `tolerance` of `want`.
bool IsScalar(const Graph& g, int v, double want, double tolerance = 1e-6);

// The other input of binary node `n` than `value` (-1 when `value` is not exactly one of them).
int OtherInput(const Node& n, int value);

// GELU's erf form: Div(x, sqrt 2) (or Mul(x, 1/sqrt 2)), Erf, Add 1, Mul by x, Mul 0.5 (five nodes).
std::vector<int> MatchGelu(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output);

// GELU's tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (eight or nine nodes).
std::vector<int> MatchGeluTanh(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output);

// SiLU: Sigmoid(x) and Mul(x, Sigmoid(x)) (two nodes).
std::vector<int> MatchSwish(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output);

// The activation a fused op's epilogue takes on `value`: GELU (erf or tanh form), SiLU, or one Relu,
// Sigmoid or Tanh node that alone reads `value`. `name` is FusedGemm's and FusedConv's attribute
// (Gelu, GeluTanh, Swish, Relu, Sigmoid, Tanh); both empty when there is none.
struct EpilogueActivation {
  std::vector<int> nodes;
  std::string name;
};
EpilogueActivation MatchEpilogueActivation(const Graph& g, int value, const std::vector<std::vector<int>>& readers, const std::vector<bool>& is_output);

}  // namespace tilebank::engine::model
