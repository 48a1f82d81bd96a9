// conv2d.im2col: a convolution as GEMM per (image, group): out[oc, pixel] = W[oc, k] x col[k, pixel]
// with k = (input channel, kh, kw). The column matrix is read through the GEMM's B packing (pack_b
// block or root gathers it panel by panel) or materialized first (materialize_col). The GEMM
// knobs are those of engine/backends/halide/gemm_schedule.h.
#include "engine/core/conv_problem.h"
#include "engine/backends/halide/gemm_schedule.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/backends/halide/layout.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

GemmShape ShapeOf(const ConvProblem& p) { return {p.OCg, p.OH * p.OW, p.Cg * p.KH * p.KW, p.N * p.G, false}; }

class ConvIm2colTemplate : public HalideTemplate {
 public:
  const char* id() const override { return "conv2d.im2col"; }
  std::vector<std::string> OpTypes() const override { return {"Conv"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    auto p = AnalyzeConv(op);
    if (!p.ok()) return p.status();
    if (p->Cg * p->KH * p->KW < 2 && p->G > 1) return Status::InvalidInput(std::string(id()) + ": a depthwise 1x1 has nothing to gather");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec& op) const override {
    SearchSpace s = GemmSpace(ShapeOf(AnalyzeConv(op).value()));
    s.knobs.push_back({"materialize_col", {int64_t{0}, int64_t{1}}, TuneMode::kSchedule});
    return s;
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    Policy p = GemmDefaultPolicy(ShapeOf(AnalyzeConv(op).value()));
    p.push_back({"materialize_col", int64_t{0}});
    return MakePolicy(p);
  }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    const ConvProblem p = AnalyzeConv(op).value();
    HalideProgram prog;
    ImageParam X = prog.AddInput(0, 4, "x");
    ImageParam Wt = prog.AddInputView(1, 2, "w", {p.Cg * p.KH * p.KW, p.OC});
    Var k("k"), m("m"), pix("pix"), b("b");
    const int taps = p.KH * p.KW;
    // b = image * G + group
    Expr g = b % p.G, img = b / p.G;
    Func a("a"), col("col");
    a(k, m, b) = Wt(k, g * p.OCg + m);
    Expr ic = k / taps, kh = (k % taps) / p.KW, kw = k % p.KW;
    Expr oh = pix / p.OW, ow = pix % p.OW;
    Expr ih = oh * p.sh - p.ph + kh * p.dh, iw = ow * p.sw - p.pw + kw * p.dw;
    Expr v = X(clamp(iw, 0, p.W - 1), clamp(ih, 0, p.H - 1), g * p.Cg + ic, img);
    if (p.Padded()) v = select(ih >= 0 && ih < p.H && iw >= 0 && iw < p.W, v, 0.f);
    col(pix, k, b) = v;
    if (IntKnob(policy, "materialize_col", 0)) col.compute_root().parallel(b).vectorize(pix, 8, TailStrategy::GuardWithIf);
    GemmEpilogue epilogue = [](Expr acc, Var, Var, Var) { return acc; };
    if (p.bias) {
      ImageParam B = prog.AddInputView(2, 1, "bias", {p.OC});
      const int G = p.G, OCg = p.OCg;
      epilogue = [B, G, OCg](Expr acc, Var, Var mm, Var bb) { return acc + B((bb % G) * OCg + mm); };
    }
    Func out = ScheduledGemm(a, col, ShapeOf(p), policy, epilogue);
    prog.pipeline = Pipeline(out);
    prog.output_extents = {p.OH * p.OW, p.OCg, p.N * p.G};
    prog.output_shape = op.outputs[0].shape;
    return prog;
  }
};

}  // namespace

const OpTemplate& ConvIm2colTemplate() {
  static const class ConvIm2colTemplate t;
  return t;
}

}  // namespace tilebank::engine
