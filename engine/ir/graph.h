// A model as the executor runs it: values (tensors with static shapes) and nodes in topological
// order. Constant values (weights, folded shape arithmetic) carry their data; every other value is
// computed at run time in float32. Built by engine/ir/onnx_import.h and simplified by
// engine/passes/constant_fold.h.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/broadcast.h"
#include "engine/kernels/subgraph.h"
#include "engine/core/tensor.h"
#include "engine/core/typed_tensor.h"

namespace tilebank::engine::model {

// Constant data: float32 tensors keep their values in `floats`; 8-bit integer ones (a quantized
// model's weights: int8 as kInt8, uint8 and bool as kUInt8) in `bytes`, one byte each; other
// integer tensors (shapes, indices) in `ints`.
struct ConstTensor {
  enum class Type { kFloat, kInt, kInt8, kUInt8 };
  Type type = Type::kFloat;
  std::vector<int64_t> shape;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<uint8_t> bytes;

  int64_t size() const { return Tensor::NumElements(shape); }
  bool IsInteger() const { return type != Type::kFloat; }
  // Element i of an integer constant, exactly.
  int64_t IntAt(int64_t i) const {
    return type == Type::kInt8 ? static_cast<int8_t>(bytes[i]) : type == Type::kUInt8 ? bytes[i] : ints[i];
  }
  double At(int64_t i) const { return type == Type::kFloat ? floats[i] : static_cast<double>(IntAt(i)); }
  // Whether a float constant holds one value throughout (false when its floats are empty).
  bool Uniform() const;
  // Whether Uniform() held when the data was released (Executor::ReleaseWeight: a kernel holds it).
  bool released_uniform = false;
  Tensor AsTensor() const;  // float32 copy
  TypedTensor AsTyped(DType dtype) const;  // the values as `dtype` (integers exactly)
  static ConstTensor Floats(std::vector<int64_t> shape, std::vector<float> values);
  static ConstTensor Ints(std::vector<int64_t> shape, std::vector<int64_t> values);
};

struct Value {
  std::string name;
  std::vector<int64_t> shape;   // meaningful only when shape_known
  std::string dtype = "float32";  // ONNX element type, lower case: float32, int64, bool, ...
  std::optional<ConstTensor> constant;
  bool shape_known = true;  // false: it depends on input values, known per run (the registry's kernels size it)
  // A sequence or an optional (dtype: its elements'; never shape_known, so it stays out of the arena,
  // the layouts and the fusions); `contained`: what an optional holds.
  ValueKind kind = ValueKind::kTensor, contained = ValueKind::kTensor;
};

struct Node {
  std::string name;     // the ONNX node's name, or <op type>_<index> when it has none
  std::string op_type;
  std::vector<int> inputs;   // value indices; -1 for an optional input left out
  std::vector<int> outputs;  // value indices; -1 for an optional output not used
  nlohmann::json attrs = nlohmann::json::object();  // name -> int, float, string or list of them
  std::map<std::string, TypedTensor> tensor_attrs;  // TENSOR attributes (ConstantOfShape's value, ...)
  std::map<std::string, std::shared_ptr<const kernels::Subgraph>> graphs;  // GRAPH attributes (If, Loop, Scan)
  // The names its subgraphs read from this graph; `inputs` ends with their values, in this order.
  std::vector<std::string> implicit_inputs;
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs;  // runtime inputs (not initializers), in the model's order
  std::vector<int> outputs;
  int opset = 0;

  int64_t AttrInt(const Node& n, const std::string& name, int64_t fallback) const;
  float AttrFloat(const Node& n, const std::string& name, float fallback) const;
  std::vector<int64_t> AttrInts(const Node& n, const std::string& name, std::vector<int64_t> fallback) const;
  std::string AttrString(const Node& n, const std::string& name, const std::string& fallback) const;
  bool IsConstant(int value) const { return value >= 0 && values[value].constant.has_value(); }
};

// What the kernel registry makes node `n`'s kernel from: its attributes, the graph's opset, its
// inputs' dtypes and kinds, its TENSOR and GRAPH attributes and implicit inputs (constant folding
// asks the registry with it: while it folds, the graph's shapes are not settled).
kernels::KernelInfo KernelInfoOf(const Graph& graph, const Node& n);
// KernelInfoOf and what the graph knows once its shapes are settled (the executor binds with it):
// static input and output shapes and the values of small constant inputs, for which the arena
// implementations are made.
kernels::KernelInfo StaticKernelInfoOf(const Graph& graph, const Node& n);

}  // namespace tilebank::engine::model
