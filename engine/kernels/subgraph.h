// Subgraphs as the registry's kernels run them: If's branches, Loop's and Scan's bodies. A subgraph
// is its nodes (each a KernelInfo without dtypes, and value names), its constants and its formal
// inputs and outputs; the values it reads from enclosing scopes come in by name.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

struct SubgraphNode {
  KernelInfo info;  // input_types empty: the dtypes are known when it runs
  std::vector<std::string> inputs;   // "" for an optional input left out; then info.implicit_inputs
  std::vector<std::string> outputs;  // "" for an optional output not used
};

struct Subgraph {
  std::string name;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, TypedTensor> constants;  // initializers and Constant nodes
  std::vector<SubgraphNode> nodes;               // topological order
};

// Values by name that a subgraph may read from its enclosing scopes.
using Scope = std::map<std::string, const TypedTensor*>;

// Runs one subgraph, again and again (a Loop's iterations): each node's kernel is made from the
// registry on first use and kept while its inputs' dtypes and kinds stay the same.
class SubgraphRunner {
 public:
  SubgraphRunner(const Subgraph& graph, int opset) : graph_(graph), opset_(opset) {}
  // The subgraph's outputs, with `inputs` bound to its formal inputs in order and `outer` the
  // values of the enclosing scopes. kInvalidInput naming the node that fails, or a value no scope has.
  Status Run(const std::vector<const TypedTensor*>& inputs, const Scope& outer, std::vector<TypedTensor>* outputs);

 private:
  const Subgraph& graph_;
  int opset_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  std::vector<std::vector<DType>> kernel_types_;
  std::vector<std::vector<ValueKind>> kernel_kinds_;
};

// The scope a control-flow node's subgraphs see: its implicit inputs by name (the inputs after the
// declared ones).
Scope ImplicitScope(const KernelInfo& info, const KernelInputs& inputs);

}  // namespace tilebank::engine::kernels
