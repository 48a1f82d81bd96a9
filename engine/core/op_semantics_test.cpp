#include "engine/core/op_semantics.h"

#include <doctest/doctest.h>

namespace tilebank::engine {
namespace {

TEST_CASE("op semantics: roles, fusion and in-place facts come from one table") {
  CHECK(OpTypesOf(OpRole::kCube) == std::vector<std::string>{"MatMul", "Gemm", "BatchMatMul", "Conv"});
  CHECK(OpTypesOf(OpRole::kBinaryElementwise) == std::vector<std::string>{"Add", "Sub", "Mul", "Div"});
  CHECK(OpTypesOf(OpRole::kAlias) == std::vector<std::string>{"Reshape", "Flatten", "Squeeze", "Unsqueeze"});
  CHECK(IsCubeOp("Conv"));
  CHECK_FALSE(IsCubeOp("Softmax"));
  CHECK(IsAliasOp("Unsqueeze"));
  CHECK_FALSE(IsAliasOp("Transpose"));  // moves elements: a kernel runs it
  CHECK(SemanticsOf("NoSuchOp") == nullptr);
  CHECK_FALSE(IsPointwiseOp("NoSuchOp"));
  // Anchors are the cube ops oneDNN and the Halide GEMM fuse into; BatchMatMul is not one.
  for (const auto& t : OpTypesOf(OpRole::kCube)) CHECK_MESSAGE(SemanticsOf(t)->anchor == (t != "BatchMatMul"), t);
  // Every epilogue step is pointwise, and only Add and Mul may take the chain as either operand.
  for (const char* t : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSwish", "Add", "Sub", "Mul", "Div"}) {
    REQUIRE(SemanticsOf(t) != nullptr);
    CHECK_MESSAGE(SemanticsOf(t)->epilogue, t);
    CHECK_MESSAGE(SemanticsOf(t)->pointwise, t);
    CHECK_MESSAGE(SemanticsOf(t)->commutative == (std::string(t) == "Add" || std::string(t) == "Mul"), t);
  }
  CHECK_FALSE(SemanticsOf("Softmax"));  // not listed: neither pointwise nor an epilogue
}

}  // namespace
}  // namespace tilebank::engine
