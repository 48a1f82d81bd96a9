// What the engine knows of an ONNX op type whatever kernel runs it: one row per type, in
// op_semantics.cpp. The model layer (fusion, in-place placement, reshapes without a kernel), the
// tuner (GA for cube ops, RL for the rest) and the templates' type lists read it here instead of
// comparing op type strings each in its own way. Shapes are ONNX's inference and
// engine/ir/constant_eval's; a kernel checks the instances it runs.
#pragma once
#include <string>
#include <vector>

namespace tilebank::engine {

enum class OpRole {
  kOther,
  kCube,            // MatMul, Gemm, BatchMatMul, Conv: tuned by GA; Conv, MatMul and Gemm anchor subgraphs
  kUnaryElementwise,
  kBinaryElementwise,  // numpy broadcasting
  kAlias,           // the output is the input's memory under another shape (Reshape, Flatten, (Un)Squeeze)
};

struct OpSemantics {
  std::string op_type;
  OpRole role = OpRole::kOther;
  bool pointwise = false;   // each output element reads only the same element of each input (broadcast aside)
  bool anchor = false;      // a subgraph's anchor: its chain of epilogue steps may run inside it
  bool epilogue = false;    // may run inside an anchor, as a step of its chain (engine/core/chain_step.h)
  bool commutative = false; // binary: a op b == b op a, so the chain may be either operand
};

// The row of `op_type`; nullptr for a type the table does not list.
const OpSemantics* SemanticsOf(const std::string& op_type);

bool IsCubeOp(const std::string& op_type);
bool IsBinaryElementwiseOp(const std::string& op_type);
bool IsUnaryElementwiseOp(const std::string& op_type);
bool IsAliasOp(const std::string& op_type);
bool IsPointwiseOp(const std::string& op_type);
// QLinearConv and QLinearMatMul: the int8 ops OPAT tunes (the int8.onednn template), whose operands
// keep their own dtypes in their descriptions.
bool IsQuantizedTunedOp(const std::string& op_type);
// The op types of one role, in the table's order.
std::vector<std::string> OpTypesOf(OpRole role);

}  // namespace tilebank::engine
