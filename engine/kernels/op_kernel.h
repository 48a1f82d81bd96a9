// The registry's kernels (engine/kernels/kernel_registry.h): one per ONNX operator, for every dtype
// its definition allows, computing on TypedTensors. A kernel sizes its outputs from its inputs'
// shapes and values, so an output whose shape is known only at run time needs nothing else.
// Correct before fast: the tuned templates and library kernels are a layer above them.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/typed_tensor.h"
#include "base/status.h"

namespace tilebank::engine::kernels {

// A node's attributes as the importer keeps them (engine/ir/graph.h: name -> int, float, string
// or a list of them).
class Attrs {
 public:
  explicit Attrs(nlohmann::json attrs = nlohmann::json::object()) : attrs_(std::move(attrs)) {}
  bool Has(const std::string& name) const { return attrs_.contains(name) && !attrs_[name].is_null(); }
  int64_t Int(const std::string& name, int64_t fallback) const;
  float Float(const std::string& name, float fallback) const;
  std::string String(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(const std::string& name, std::vector<float> fallback = {}) const;
  const nlohmann::json& json() const { return attrs_; }

 private:
  nlohmann::json attrs_;
};

struct Subgraph;  // engine/kernels/subgraph.h

// What a kernel is made for: the node (for messages and attributes), the opset the model is at, and
// its inputs' dtypes (kUndefined: an optional input left out).
struct KernelInfo {
  std::string op_type;
  std::string node_name;
  Attrs attrs;
  int opset = 17;
  std::vector<DType> input_types;
  std::vector<ValueKind> input_kinds;  // per input; empty, or shorter: tensors
  int num_outputs = 1;  // the outputs the node declares (optional ones may go unused)
  std::map<std::string, TypedTensor> tensor_attrs;  // TENSOR attributes (ConstantOfShape's value, ...)
  std::map<std::string, std::shared_ptr<const Subgraph>> graphs;  // GRAPH attributes (If's branches, Loop's body)
  // The enclosing scopes' values its subgraphs read, by name: the node's inputs after the declared ones.
  std::vector<std::string> implicit_inputs;

  size_t DeclaredInputs() const { return input_types.size() - implicit_inputs.size(); }
  DType InputType(size_t i) const { return i < input_types.size() ? input_types[i] : DType::kUndefined; }
  ValueKind InputKind(size_t i) const { return i < input_kinds.size() ? input_kinds[i] : ValueKind::kTensor; }
  bool HasInput(size_t i) const { return InputType(i) != DType::kUndefined || InputKind(i) != ValueKind::kTensor; }
  // kInvalidInput naming the node and op: "node 'n' (Op): <what>".
  Status Bad(const std::string& what) const;
};

// Inputs in the node's order; nullptr for an optional input left out.
using KernelInputs = std::vector<const TypedTensor*>;

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Computes the node's outputs: `outputs` holds one tensor per declared output, each given its
  // dtype, shape and elements here. Bad values (an index out of range, a shape that does not add
  // up) are kInvalidInput naming the node; nothing is thrown.
  virtual Status Compute(const KernelInputs& inputs, std::vector<TypedTensor>* outputs) const = 0;
};

// A kernel that is one function (most are).
using ComputeFn = std::function<Status(const KernelInputs& inputs, std::vector<TypedTensor>* outputs)>;
std::unique_ptr<OpKernel> FunctionKernel(ComputeFn compute);

}  // namespace tilebank::engine::kernels
