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
// registry on first use and kept while its inputs' dtypes and kinds stay the same. Where each name
// comes from is resolved on the first run, and each node's outputs stay in place between runs
// (kernels write over last run's buffers, as the executor's steps do): an iteration allocates only
// what its kernels do.
class SubgraphRunner {
 public:
  SubgraphRunner(const Subgraph& graph, int opset) : graph_(graph), opset_(opset) {}
  // The subgraph's outputs, with `inputs` bound to its formal inputs in order and `outer` the
  // values of the enclosing scopes. kInvalidInput naming the node that fails, or a value no scope has.
  Status Run(const std::vector<const TypedTensor*>& inputs, const Scope& outer, std::vector<TypedTensor>* outputs);

 private:
  // Where a name's value is found: an earlier node's output, a formal input, a constant, an
  // enclosing scope (looked up by name each run: the scope is the caller's), or nowhere (an
  // optional input left out).
  struct Source {
    enum class From { kNode, kInput, kConstant, kOuter, kNone } from = From::kNone;
    size_t node = 0, index = 0;        // kNode: results_[node][index]; kInput: inputs[index]
    const TypedTensor* constant = nullptr;
    const std::string* name = nullptr;  // kOuter
  };
  void Resolve();
  const TypedTensor* Find(const Source& source, const std::vector<const TypedTensor*>& inputs, const Scope& outer) const;

  const Subgraph& graph_;
  int opset_;
  bool resolved_ = false;
  std::vector<std::vector<Source>> node_inputs_;  // per node: its inputs, then its implicit inputs
  std::vector<Source> outputs_;
  static constexpr size_t kKeptBytes = 1 << 20;    // results_ larger than this are freed after each run
  std::vector<std::vector<TypedTensor>> results_;  // per node: last run's outputs
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  std::vector<std::vector<DType>> kernel_types_;
  std::vector<std::vector<ValueKind>> kernel_kinds_;
  KernelInputs in_;  // one node's inputs, reused
};

// The scope a control-flow node's subgraphs see: its implicit inputs by name (the inputs after the
// declared ones).
Scope ImplicitScope(const KernelInfo& info, const KernelInputs& inputs);

}  // namespace tilebank::engine::kernels
