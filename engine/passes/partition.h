// SGAT's subgraphs (DESIGN.md "SGAT"): the graph split into anchors (Conv, MatMul, Gemm) each with
// the chain of elementwise nodes that can run inside its loops: bias and residual Add, Mul or
// Sub/Div by a tensor, the activations Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSwish, and the
// erf form of GELU as PyTorch exports it (x * 0.5 * (1 + Erf(x / sqrt 2)), five nodes, one step)
// and its tanh approximation (GPT-2's, eight or nine nodes, one GeluTanh step), and SiLU as
// exported (x * Sigmoid(x), two nodes, one Swish step).
// A chain stops at a value another node (or the model's output) also reads, so fusing never
// changes what the rest of the graph sees. A subgraph's policy (engine/backends/fused_policy.h) says how much of
// its chain is fused.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/backends/onednn/attention_kernel.h"
#include "engine/ir/graph.h"
#include "engine/core/chain_step.h"
#include "repo/canonical.h"
#include "repo/key.h"

namespace tilebank::engine::model {

// One step of the chain as the anchor's epilogue runs it (a Gelu step stands for its five nodes,
// a GeluTanh step for its eight or nine, a Swish step for its two).
struct EpilogueStep {
  ChainStep step;    // binary ops: operand_shape is the operand value's shape
  int nodes = 1;     // chain nodes it stands for
  int operand = -1;  // binary ops: the other operand's value
};

// An attention block (engine/passes/attention_match.h) as a subgraph: its anchor is MatMul(Q, K^T),
// its chain every other node of the block in graph order (the head splits before the anchor too),
// and its one step, "Attention", stands for them all.
struct AttentionBinding {
  AttentionGeometry geometry;
  std::vector<int> inputs;  // the values the fused kernel reads: Q's, K's, V's memory, the mask
};

struct Subgraph {
  int anchor = -1;                 // node index of the anchor
  std::vector<int> chain;          // node indices of the epilogue nodes, in order
  std::optional<AttentionBinding> attention;  // set for an attention block
  std::vector<EpilogueStep> steps; // the chain as steps (a step may stand for several nodes)
  nlohmann::json description;      // {"nodes": [...]}: ATC single-op form of each node with "inputs"
  CanonicalDescriptor canonical;   // of `description`; its key is the subgraph's repo_key
  Key key() const { return KeyOfDescriptor(canonical.text); }
  // The chain nodes the first `fused` steps stand for.
  int NodesOf(int fused) const;
  // The output value after `fused` steps (0: the anchor's own).
  int OutputAfter(const Graph& graph, int fused) const;
};

// The attention blocks of `graph`, then every other anchor with a chain of at least one node, in
// node order. A node belongs to at most one subgraph.
std::vector<Subgraph> PartitionSubgraphs(const Graph& graph);

// The subgraph alone as a graph: its nodes, the values they read (constants with their data;
// everything else becomes a graph input) and the chain's last output as the graph's output.
Graph ExtractSubgraph(const Graph& graph, const Subgraph& subgraph);

}  // namespace tilebank::engine::model
