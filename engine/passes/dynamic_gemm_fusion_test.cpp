// A Gemm (with its bias and GELU) and a MatMul (with Add and Relu) on rows known only at run time
// (the rows of x whose sum is positive: NonZero, Gather) each become one FusedGemm node computing
// what the chain computes, checked against plain loops; an activation whose input the model also
// outputs stays a node of its own.
#include "engine/passes/dynamic_gemm_fusion.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

constexpr int64_t kTokens = 24, kDepth = 20, kWidth = 12;

enum class GemmForm { kGemmGelu, kMatMulAddRelu };

// x [kTokens, kDepth] -> the rows whose sum is positive -> Gemm (W [kWidth, kDepth], transB, bias) -> GELU as torch
// exports it, or MatMul (W [kDepth, kWidth]) -> Add bias -> Relu. `tap`: the product is a graph output too.
std::string WriteDynamicGemm(const TempDir& dir, GemmForm form, bool tap, std::vector<float>* w, std::vector<float>* bias) {
  ModelBuilder b;
  b.Input("x", {kTokens, kDepth});
  b.Ints("axes", {1});
  b.Floats("zero", {}, {0.0f});
  b.Ints("flat", {-1});
  ModelBuilder::IntAttr(b.Node("ReduceSum", {"x", "axes"}, {"sums"}), "keepdims", 0);
  b.Node("Greater", {"sums", "zero"}, {"positive"});
  b.Node("NonZero", {"positive"}, {"where"});
  b.Node("Reshape", {"where", "flat"}, {"chosen"});
  ModelBuilder::IntAttr(b.Node("Gather", {"x", "chosen"}, {"rows"}), "axis", 0);
  *bias = b.Weight("bias", {kWidth});
  if (form == GemmForm::kGemmGelu) {
    *w = b.Weight("w", {kWidth, kDepth});
    ModelBuilder::IntAttr(b.Node("Gemm", {"rows", "w", "bias"}, {"product"}), "transB", 1);
    b.Floats("sqrt2", {}, {1.4142135f});
    b.Floats("one", {}, {1.0f});
    b.Floats("half", {}, {0.5f});
    b.Node("Div", {"product", "sqrt2"}, {"scaled"});
    b.Node("Erf", {"scaled"}, {"erf"});
    b.Node("Add", {"erf", "one"}, {"erf1"});
    b.Node("Mul", {"product", "erf1"}, {"times"});
    b.Node("Mul", {"times", "half"}, {"y"});
  } else {
    *w = b.Weight("w", {kDepth, kWidth});
    b.Node("MatMul", {"rows", "w"}, {"matmul"});
    b.Node("Add", {"matmul", "bias"}, {"product"});
    b.Node("Relu", {"product"}, {"y"});
  }
  b.Output("y", {-1, kWidth});
  if (tap) b.Output("product", {-1, kWidth});
  return b.Save(dir / "dynamic_gemm.onnx");
}

double ExpectedRow(GemmForm form, const float* row, const std::vector<float>& w, const std::vector<float>& bias, int64_t n) {
  double v = bias[n];
  for (int64_t k = 0; k < kDepth; ++k) v += double(row[k]) * (form == GemmForm::kGemmGelu ? w[n * kDepth + k] : w[k * kWidth + n]);
  return form == GemmForm::kGemmGelu ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : std::max(v, 0.0);
}

TEST_CASE("dynamic gemm fusion: a GEMM on rows known at run time, its bias and activation are one node") {
  for (GemmForm form : {GemmForm::kGemmGelu, GemmForm::kMatMulAddRelu}) {
    CAPTURE(static_cast<int>(form));
    TempDir dir;
    std::vector<float> w, bias;
    auto e = LoadModel(WriteDynamicGemm(dir, form, false, &w, &bias), {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    const Graph& g = (*e)->graph();
    int fused = 0;
    for (const Node& n : g.nodes) {
      CHECK(n.op_type != "Gemm");
      CHECK(n.op_type != "MatMul");
      CHECK(n.op_type != "Erf");
      CHECK(n.op_type != "Relu");
      if (n.op_type != "FusedGemm") continue;
      ++fused;
      CHECK(n.attrs.value("activation", "") == (form == GemmForm::kGemmGelu ? "Gelu" : "Relu"));
      CHECK(n.inputs.size() == 3);
    }
    CHECK(fused == 1);
    for (uint64_t seed : {3, 4}) {  // two row counts through one kernel
      const Tensor x = RandomInputs(g, seed)[0];
      TypedTensor typed(DType::kFloat32, x.shape);
      std::memcpy(typed.bytes.data(), x.data.data(), typed.bytes.size());
      std::vector<TypedTensor> out;
      REQUIRE((*e)->Run(std::vector<const TypedTensor*>{&typed}, &out).ok());
      std::vector<int64_t> rows;
      for (int64_t t = 0; t < kTokens; ++t) {
        double sum = 0;
        for (int64_t k = 0; k < kDepth; ++k) sum += x.data[t * kDepth + k];
        if (sum > 0) rows.push_back(t);
      }
      REQUIRE(!rows.empty());  // some rows to compare
      REQUIRE(out[0].shape == std::vector<int64_t>{static_cast<int64_t>(rows.size()), kWidth});
      double worst = 0;
      for (size_t r = 0; r < rows.size(); ++r)
        for (int64_t n = 0; n < kWidth; ++n)
          worst = std::max(worst, std::fabs(ExpectedRow(form, &x.data[rows[r] * kDepth], w, bias, n) - out[0].data<float>()[r * kWidth + n]));
      CHECK(worst < 1e-4);
    }
  }
}

TEST_CASE("dynamic gemm fusion: an activation whose input the model outputs stays a node") {
  TempDir dir;
  std::vector<float> w, bias;
  auto e = LoadModel(WriteDynamicGemm(dir, GemmForm::kGemmGelu, true, &w, &bias), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  bool erf = false;
  for (const Node& n : (*e)->graph().nodes) {
    erf |= n.op_type == "Erf";
    if (n.op_type == "FusedGemm") CHECK(n.attrs.value("activation", "") == "");
  }
  CHECK(erf);
}

}  // namespace
}  // namespace tilebank::engine::model
