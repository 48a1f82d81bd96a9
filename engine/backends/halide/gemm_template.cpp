// matmul.tiled / batch_matmul.tiled / gemm.tiled: MatMul, BatchMatMul and Gemm on the shared
// register-blocked GEMM (engine/backends/halide/gemm_schedule.h), with Gemm's alpha, beta and bias in the epilogue.
#include "engine/core/gemm_problem.h"
#include "engine/backends/halide/gemm_program.h"
#include "engine/backends/halide/gemm_schedule.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/backends/halide/layout.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

GemmShape ShapeOf(const GemmProblem& p) {
  return {static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K), static_cast<int>(p.batch), p.trans_a};
}

// Halide extents of an operand of row-major `shape` with its leading batch dimensions collapsed
// into one (dims 3) or into the rows (dims 2).
std::vector<int> CollapsedExtents(const std::vector<int64_t>& shape, int dims) {
  const int cols = static_cast<int>(shape.back()), rows = static_cast<int>(shape[shape.size() - 2]);
  const int outer = static_cast<int>(Tensor::NumElements(std::vector<int64_t>(shape.begin(), shape.end() - 2)));
  return dims == 3 ? std::vector<int>{cols, rows, outer} : std::vector<int>{cols, rows * outer};
}

class GemmTemplate : public HalideTemplate {
 public:
  GemmTemplate(const char* id, std::vector<std::string> op_types) : id_(id), op_types_(std::move(op_types)) {}
  const char* id() const override { return id_; }

  std::vector<std::string> OpTypes() const override { return op_types_; }
  Status SupportsInstance(const OpSpec& op) const override {
    auto p = AnalyzeGemm(op);
    return p.ok() ? Status::Ok() : p.status();
  }
  SearchSpace Space(const OpSpec& op) const override { return GemmSpace(ShapeOf(AnalyzeGemm(op).value())); }
  Policy DefaultPolicy(const OpSpec& op) const override { return GemmDefaultPolicy(ShapeOf(AnalyzeGemm(op).value())); }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override { return DefineGemmProgram(op, policy); }

 private:
  const char* id_;
  std::vector<std::string> op_types_;
};

}  // namespace

HalideProgram DefineGemmProgram(const OpSpec& op, const Policy& policy, const GemmThen& then) {
  const GemmProblem p = AnalyzeGemm(op).value();
  HalideProgram prog;
  Var k("k"), m("m"), n("n"), b("b");
  const int a_dims = p.a_batched ? 3 : 2, b_dims = p.b_batched ? 3 : 2;
  ImageParam A = prog.AddInputView(0, a_dims, "A", CollapsedExtents(op.inputs[0].shape, a_dims));
  // pack_b root: B goes into panels when the kernel is bound (once, for a weight), not per run.
  const bool prepack = TextKnob(policy, "pack_b", "none") == "root";
  ImageParam B;
  Func b_panels;
  if (prepack) {
    const int K = static_cast<int>(p.K), N = static_cast<int>(p.N);
    const GemmPanels layout = GemmPanelsOf(policy, N);
    const bool trans_b = p.trans_b;
    ImageParam panels = prog.AddInput(1, 4, "B_panels", [=](const Tensor& t) { return PackBPanels(t, K, N, layout, trans_b); });
    Var pi("pi"), pk("pk"), po("po");
    b_panels(pi, pk, po, b) = panels(pi, pk, po, p.b_batched ? Expr(b) : Expr(0));
  } else {
    B = prog.AddInputView(1, b_dims, "B", CollapsedExtents(op.inputs[1].shape, b_dims));
  }
  auto at = [](ImageParam& t, Expr x, Expr y, Expr batch, bool batched) {
    return batched ? t(x, y, batch) : t(x, y);
  };
  Func a("a"), bmat("bmat");
  a(k, m, b) = p.trans_a ? at(A, m, k, b, p.a_batched) : at(A, k, m, b, p.a_batched);
  if (!prepack) bmat(n, k, b) = p.trans_b ? at(B, k, n, b, p.b_batched) : at(B, n, k, b, p.b_batched);
  GemmEpilogue epilogue = [](Expr acc, Var, Var, Var) { return acc; };
  if (op.op_type == "Gemm") {
    const float alpha = p.alpha, beta = p.beta;
    if (p.bias == BiasShape::kNone || beta == 0.f) {
      epilogue = [alpha](Expr acc, Var, Var, Var) { return alpha == 1.f ? acc : alpha * acc; };
    } else {
      const int M = static_cast<int>(p.M), N = static_cast<int>(p.N);
      std::vector<int> c_extents = p.bias == BiasShape::kFull     ? std::vector<int>{N, M}
                                   : p.bias == BiasShape::kColumn ? std::vector<int>{1, M}
                                   : p.bias == BiasShape::kRow    ? std::vector<int>{N}
                                                                  : std::vector<int>{1};
      ImageParam C = prog.AddInputView(2, static_cast<int>(c_extents.size()), "C", c_extents);
      BiasShape shape = p.bias;
      epilogue = [=](Expr acc, Var nn, Var mm, Var) {
        Expr c = shape == BiasShape::kScalar ? C(0) : shape == BiasShape::kRow ? C(nn) : shape == BiasShape::kColumn ? C(0, mm) : C(nn, mm);
        return alpha * acc + beta * c;
      };
    }
  }
  if (then) epilogue = [&prog, own = epilogue, then](Expr acc, Var nn, Var mm, Var bb) { return then(prog, own(acc, nn, mm, bb), nn, mm, bb); };
  Func out = ScheduledGemm(a, bmat, ShapeOf(p), policy, epilogue, b_panels);
  prog.pipeline = Pipeline(out);
  prog.output_extents = {static_cast<int>(p.N), static_cast<int>(p.M), static_cast<int>(p.batch)};
  prog.output_shape = op.outputs[0].shape;
  return prog;
}

const OpTemplate& MatMulTemplate() {
  static const GemmTemplate t("matmul.tiled", {"MatMul"});
  return t;
}
const OpTemplate& BatchMatMulTemplate() {
  static const GemmTemplate t("batch_matmul.tiled", {"BatchMatMul"});
  return t;
}
const OpTemplate& GemmOpTemplate() {
  static const GemmTemplate t("gemm.tiled", {"Gemm"});
  return t;
}

}  // namespace tilebank::engine
