// matmul.tiled / batch_matmul.tiled / gemm.tiled: MatMul, BatchMatMul and Gemm on the shared
// register-blocked GEMM (engine/gemm_schedule.h), with Gemm's alpha, beta and bias in the epilogue.
#include "engine/gemm_problem.h"
#include "engine/gemm_schedule.h"
#include "engine/halide_program.h"
#include "engine/layout.h"
#include "engine/templates/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

GemmShape ShapeOf(const GemmProblem& p) {
  return {static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K), static_cast<int>(p.batch), p.trans_a};
}

// The operand as a Halide buffer of `dims` dimensions (leading batch dimensions collapsed).
std::function<Buffer<float>(const Tensor&)> Collapsed(int dims) {
  return [dims](const Tensor& t) {
    Tensor view;
    view.shape.assign(t.shape.end() - 2, t.shape.end());
    if (dims == 3) view.shape.insert(view.shape.begin(), Tensor::NumElements(std::vector<int64_t>(t.shape.begin(), t.shape.end() - 2)));
    else view.shape[0] = Tensor::NumElements(std::vector<int64_t>(t.shape.begin(), t.shape.end() - 1));
    view.data = t.data;
    return ToHalide(view);
  };
}

class GemmTemplate : public HalideTemplate {
 public:
  GemmTemplate(const char* id, std::vector<std::string> op_types) : id_(id), op_types_(std::move(op_types)) {}
  const char* id() const override { return id_; }

  Status Supports(const OpSpec& op) const override {
    if (std::find(op_types_.begin(), op_types_.end(), op.op_type) == op_types_.end())
      return Status::InvalidInput(std::string(id_) + " does not implement " + op.op_type);
    auto p = AnalyzeGemm(op);
    return p.ok() ? Status::Ok() : p.status();
  }
  SearchSpace Space(const OpSpec& op) const override { return GemmSpace(ShapeOf(AnalyzeGemm(op).value())); }
  Policy DefaultPolicy(const OpSpec& op) const override { return GemmDefaultPolicy(ShapeOf(AnalyzeGemm(op).value())); }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    const GemmProblem p = AnalyzeGemm(op).value();
    HalideProgram prog;
    Var k("k"), m("m"), n("n"), b("b");
    const int a_dims = p.a_batched ? 3 : 2, b_dims = p.b_batched ? 3 : 2;
    ImageParam A = prog.AddInput(0, a_dims, "A", Collapsed(a_dims));
    ImageParam B = prog.AddInput(1, b_dims, "B", Collapsed(b_dims));
    auto at = [](ImageParam& t, Expr x, Expr y, Expr batch, bool batched) {
      return batched ? t(x, y, batch) : t(x, y);
    };
    Func a("a"), bmat("bmat");
    a(k, m, b) = p.trans_a ? at(A, m, k, b, p.a_batched) : at(A, k, m, b, p.a_batched);
    bmat(n, k, b) = p.trans_b ? at(B, k, n, b, p.b_batched) : at(B, n, k, b, p.b_batched);
    GemmEpilogue epilogue = [](Expr acc, Var, Var, Var) { return acc; };
    if (op.op_type == "Gemm") {
      const float alpha = p.alpha, beta = p.beta;
      if (p.bias == BiasShape::kNone || beta == 0.f) {
        epilogue = [alpha](Expr acc, Var, Var, Var) { return alpha == 1.f ? acc : alpha * acc; };
      } else {
        ImageParam C = prog.AddInput(2, p.bias == BiasShape::kFull || p.bias == BiasShape::kColumn ? 2 : 1, "C",
                                     [](const Tensor& t) {
                                       Tensor flat = t;
                                       if (t.rank() == 2 && t.shape[0] == 1) flat.shape = {t.shape[1]};
                                       if (t.rank() == 0 || Tensor::NumElements(t.shape) == 1) flat.shape = {1};
                                       return ToHalide(flat);
                                     });
        BiasShape shape = p.bias;
        epilogue = [=](Expr acc, Var nn, Var mm, Var) {
          Expr c = shape == BiasShape::kScalar ? C(0) : shape == BiasShape::kRow ? C(nn) : shape == BiasShape::kColumn ? C(0, mm) : C(nn, mm);
          return alpha * acc + beta * c;
        };
      }
    }
    Func out = ScheduledGemm(a, bmat, ShapeOf(p), policy, epilogue);
    prog.pipeline = Pipeline(out);
    prog.output_extents = {static_cast<int>(p.N), static_cast<int>(p.M), static_cast<int>(p.batch)};
    prog.output_shape = op.outputs[0].shape;
    return prog;
  }

 private:
  const char* id_;
  std::vector<std::string> op_types_;
};

}  // namespace

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
