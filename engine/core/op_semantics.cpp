#include "engine/core/op_semantics.h"

#include <algorithm>

namespace tilebank::engine {

namespace {

const std::vector<OpSemantics>& Table() {
  using R = OpRole;
  //                       op type        role                  pointwise anchor epilogue commutative
  static const std::vector<OpSemantics> table = {
      {"MatMul", R::kCube, false, true, false, false},
      {"Gemm", R::kCube, false, true, false, false},
      {"BatchMatMul", R::kCube, false, false, false, false},
      {"Conv", R::kCube, false, true, false, false},
      {"Add", R::kBinaryElementwise, true, false, true, true},
      {"Sub", R::kBinaryElementwise, true, false, true, false},
      {"Mul", R::kBinaryElementwise, true, false, true, true},
      {"Div", R::kBinaryElementwise, true, false, true, false},
      {"Relu", R::kUnaryElementwise, true, false, true, false},
      {"Sigmoid", R::kUnaryElementwise, true, false, true, false},
      {"Tanh", R::kUnaryElementwise, true, false, true, false},
      {"Gelu", R::kUnaryElementwise, true, false, false, false},  // an epilogue step when matched as its five-node erf form
      {"Erf", R::kUnaryElementwise, true, false, false, false},
      {"Clip", R::kUnaryElementwise, true, false, true, false},
      {"HardSigmoid", R::kUnaryElementwise, true, false, false, false},
      {"HardSwish", R::kUnaryElementwise, true, false, true, false},
      {"LeakyRelu", R::kOther, true, false, true, false},
      {"Sqrt", R::kOther, true, false, false, false},
      {"Neg", R::kOther, true, false, false, false},
      {"Exp", R::kOther, true, false, false, false},
      {"Pow", R::kOther, true, false, false, false},
      {"Reshape", R::kAlias, false, false, false, false},
      {"Flatten", R::kAlias, false, false, false, false},
      {"Squeeze", R::kAlias, false, false, false, false},
      {"Unsqueeze", R::kAlias, false, false, false, false},
  };
  return table;
}

OpRole RoleOf(const std::string& op_type) {
  const OpSemantics* s = SemanticsOf(op_type);
  return s ? s->role : OpRole::kOther;
}

}  // namespace

const OpSemantics* SemanticsOf(const std::string& op_type) {
  const auto& table = Table();
  auto it = std::find_if(table.begin(), table.end(), [&](const OpSemantics& s) { return s.op_type == op_type; });
  return it == table.end() ? nullptr : &*it;
}

bool IsCubeOp(const std::string& op_type) { return RoleOf(op_type) == OpRole::kCube; }
bool IsBinaryElementwiseOp(const std::string& op_type) { return RoleOf(op_type) == OpRole::kBinaryElementwise; }
bool IsUnaryElementwiseOp(const std::string& op_type) { return RoleOf(op_type) == OpRole::kUnaryElementwise; }
bool IsAliasOp(const std::string& op_type) { return RoleOf(op_type) == OpRole::kAlias; }
bool IsPointwiseOp(const std::string& op_type) {
  const OpSemantics* s = SemanticsOf(op_type);
  return s && s->pointwise;
}

bool IsQuantizedTunedOp(const std::string& op_type) { return op_type == "QLinearConv" || op_type == "QLinearMatMul"; }

std::vector<std::string> OpTypesOf(OpRole role) {
  std::vector<std::string> types;
  for (const OpSemantics& s : Table())
    if (s.role == role) types.push_back(s.op_type);
  return types;
}

}  // namespace tilebank::engine
