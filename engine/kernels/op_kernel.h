// The registry's kernels (engine/kernels/kernel_registry.h): one per ONNX operator, for every dtype
// its definition allows, computing on TypedTensors. A kernel sizes its outputs from its inputs'
// shapes and values, so an output whose shape is known only at run time needs nothing else.
// Correct before fast: the tuned templates and library kernels are a layer above them.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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
  // What the graph knows before a run, where it knows it (empty, or nullopt / nullptr per input;
  // model::StaticKernelInfoOf fills them):
  // each input's and declared output's static shape, and the values of constant inputs of at most
  // kConstantValueLimit elements. The arena implementations are made for exactly these.
  std::vector<std::optional<std::vector<int64_t>>> input_shapes, output_shapes;
  std::vector<std::shared_ptr<const TypedTensor>> constant_inputs;
  std::vector<bool> constant_input;  // per input: a constant of the graph, of any size (its memory never changes)
  static constexpr int64_t kConstantValueLimit = 1 << 16;

  size_t DeclaredInputs() const { return input_types.size() - implicit_inputs.size(); }
  DType InputType(size_t i) const { return i < input_types.size() ? input_types[i] : DType::kUndefined; }
  ValueKind InputKind(size_t i) const { return i < input_kinds.size() ? input_kinds[i] : ValueKind::kTensor; }
  bool HasInput(size_t i) const { return InputType(i) != DType::kUndefined || InputKind(i) != ValueKind::kTensor; }
  const std::optional<std::vector<int64_t>>& InputShape(size_t i) const;
  const std::optional<std::vector<int64_t>>& OutputShape(size_t i) const;
  const TypedTensor* ConstantInput(size_t i) const { return i < constant_inputs.size() ? constant_inputs[i].get() : nullptr; }
  bool IsConstantInput(size_t i) const { return i < constant_input.size() && constant_input[i]; }
  // kInvalidInput naming the node and op: "node 'n' (Op): <what>".
  Status Bad(const std::string& what) const;
};

// Inputs in the node's order; nullptr for an optional input left out.
using KernelInputs = std::vector<const TypedTensor*>;

// A float32 computation over raw row-major buffers of the static shapes its kernel was made for:
// what the executor runs in its arena, with no tensor made or copied. Constant inputs were read when
// the kernel was made; their pointers may be null. An input of another type than float32 (Where's
// bool condition) is passed as a pointer to its own elements. `overwrites_input`: the output may be placed over
// input 0 (each output element reads only the same element of it), which the memory plan uses.
struct ArenaFunction {
  std::function<void(const std::vector<const float*>& inputs, float* output)> run;
  bool overwrites_input = false;
  // `run` may run on any thread, beside another kernel, serially there: plain loops over
  // ParallelFor, no library state of the thread that made it (Kernel::RunsOnAnyThread).
  bool runs_on_any_thread = false;
  // After `run`, on the same thread: what it found wrong in its run-time inputs (an index out of
  // range: kInvalidInput naming the node, the output then undefined); empty: nothing it checks.
  std::function<Status()> verdict;
};

// The first bad value (an index out of range) an arena kernel's run met, on any of its threads, for
// its ArenaFunction::verdict: Clear at the run's start, Record where met, First after the run.
class RunFault {
 public:
  void Clear() { found_.store(false, std::memory_order_relaxed); }
  void Record(int64_t value) {
    if (!found_.exchange(true)) value_.store(value);
  }
  std::optional<int64_t> First() const { return found_.load() ? std::optional<int64_t>(value_.load()) : std::nullopt; }
  // The ArenaFunction::verdict of a kernel with this fault: kInvalidInput naming the node,
  // "<what> <first value> is outside <where> of <extent>", or Ok when nothing was recorded.
  static std::function<Status()> Verdict(std::shared_ptr<const RunFault> fault, const KernelInfo& info, std::string what, std::string where,
                                         int64_t extent);

 private:
  std::atomic<bool> found_{false};
  std::atomic<int64_t> value_{0};
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Computes the node's outputs: `outputs` holds one tensor per declared output, each given its
  // dtype, shape and elements here. Bad values (an index out of range, a shape that does not add
  // up) are kInvalidInput naming the node; nothing is thrown.
  virtual Status Compute(const KernelInputs& inputs, std::vector<TypedTensor>* outputs) const = 0;
  // The arena form, for a kernel that has one (see ArenaFunction); nullptr otherwise.
  virtual const ArenaFunction* Arena() const { return nullptr; }
  // Computes its one output straight over float32 buffers its caller holds (row-major, at the shapes
  // the node was made with; a constant input's pointer may be null), where the kernel has what it
  // needs for that already (its weights packed by PrepareAhead): no tensor copied in or out. False,
  // with nothing written, where it has not; the caller then calls Compute. False by default.
  virtual bool ComputeOnBuffers(const std::vector<const float*>& inputs, float* output) const {
    (void)inputs;
    (void)output;
    return false;
  }
  // Whether the kernel, after the Computes it has run, no longer reads input k's data: a constant it
  // now computes from a copy of its own (oneDNN's packed weights), for every later Compute. The
  // caller may then free that data; the tensor it passes keeps its dtype and shape. False by default.
  virtual bool HoldsConstantInput(int k) const {
    (void)k;
    return false;
  }
  // Before the first Compute, at load: makes ready what does not depend on the data computed at run
  // time (oneDNN's packed weights), from the constants' tensors and, for the other inputs (null where
  // absent), tensors of their dtype and shape that hold no elements. Afterwards HoldsConstantInput
  // says which constants it no longer reads. A kernel that cannot is left to its first Compute:
  // this is never an error. Nothing by default.
  virtual void PrepareAhead(const KernelInputs& inputs) const { (void)inputs; }
};

// A kernel that is one function (most are).
using ComputeFn = std::function<Status(const KernelInputs& inputs, std::vector<TypedTensor>* outputs)>;
std::unique_ptr<OpKernel> FunctionKernel(ComputeFn compute);
// A kernel that is an arena function for the static shapes `info` holds; its Compute runs the same
// function on tensors of those shapes (float32, constants as `info` read them).
std::unique_ptr<OpKernel> ArenaKernel(const KernelInfo& info, ArenaFunction arena);

}  // namespace tilebank::engine::kernels
