// conv2d.direct: register-blocked direct convolution. Format knob `layout` picks the activation
// layout the kernel works in: NCHW (vectors along the output width, rows of output channels),
// NHWC or NCHWc (vectors along output channels, rows of output positions; weights prepacked with
// output channels innermost). Schedule knobs: vec_tile (vectors per register tile), row_tile,
// reduce_order (input channels outermost or the window outermost), unroll_kw, parallel.
#include "engine/core/conv_problem.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/core/host_facts.h"
#include "engine/backends/halide/layout.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

bool ChannelLayout(const std::string& layout) { return layout != "NCHW"; }

bool Valid(const ConvProblem& p, const Policy& policy) {
  const HostFacts& host = Host();
  const int V = host.vector_floats;
  int64_t vt = IntKnob(policy, "vec_tile", 1), rt = IntKnob(policy, "row_tile", 1);
  if (vt * rt + vt + 1 > host.vector_registers) return false;
  std::string layout = TextKnob(policy, "layout", "NCHW");
  if (ChannelLayout(layout)) {
    if (p.OC % (vt * V) != 0) return false;      // whole vectors of output channels
    if (rt > p.OW) return false;
    if (layout == "NCHWc" && p.C % V != 0 && p.G != 1) return false;
  } else {
    if (rt > p.OCg) return false;                 // rows of output channels within a group
    if (vt > 1 && (vt - 1) * V >= p.OW) return false;
  }
  return true;
}

class ConvDirectTemplate : public HalideTemplate {
 public:
  const char* id() const override { return "conv2d.direct"; }
  std::vector<std::string> OpTypes() const override { return {"Conv"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    auto p = AnalyzeConv(op);
    return p.ok() ? Status::Ok() : p.status();
  }
  SearchSpace Space(const OpSpec& op) const override {
    ConvProblem p = AnalyzeConv(op).value();
    SearchSpace s;
    s.knobs = {
        {"vec_tile", IntValues({1, 2, 4}), TuneMode::kSchedule},
        {"row_tile", IntValues({1, 2, 3, 4, 6, 7, 8, 14}), TuneMode::kSchedule},
        {"reduce_order", {std::string("c_outer"), std::string("k_outer")}, TuneMode::kSchedule},
        {"unroll_kw", IntValues({0, 1}), TuneMode::kSchedule},
        {"parallel", IntValues({0, 1}), TuneMode::kSchedule},
        {"layout", {std::string("NCHW"), std::string("NHWC"), std::string("NCHWc")}, TuneMode::kFormat},
    };
    s.valid = [p](const Policy& policy) { return Valid(p, policy); };
    return s;
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    ConvProblem p = AnalyzeConv(op).value();
    // Vectors along output channels (NHWC) when they come in whole vectors, else along the width
    // (NCHW); the register tile as wide as the register file allows.
    const int V = Host().vector_floats;
    const bool channels = p.OC % V == 0;
    const std::string layout = channels ? "NHWC" : "NCHW";
    int64_t vt = channels ? (p.OC % (2 * V) == 0 ? 2 : 1) : (p.OW > V ? 2 : 1), rt = 1;
    for (int64_t r : {14, 8, 7, 6, 4, 3, 2, 1})
      if (Valid(p, MakePolicy({{"vec_tile", vt}, {"row_tile", r}, {"layout", layout}}))) { rt = r; break; }
    return MakePolicy({{"vec_tile", vt}, {"row_tile", rt}, {"reduce_order", std::string("c_outer")}, {"unroll_kw", int64_t{0}},
                       {"parallel", int64_t{p.Flops() > 2e6 ? 1 : 0}}, {"layout", layout}});
  }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    const ConvProblem p = AnalyzeConv(op).value();
    const int V = Host().vector_floats;
    const std::string layout_name = TextKnob(policy, "layout", "NCHW");
    const Layout4d layout = ParseLayout4d(layout_name);
    const int vt = static_cast<int>(IntKnob(policy, "vec_tile", 1)), rt = static_cast<int>(IntKnob(policy, "row_tile", 1));
    HalideProgram prog;
    ImageParam X = prog.AddInput(0, layout == Layout4d::kNCHWc ? 5 : 4, "x", [layout, V](const Tensor& t) { return ToLayout(t, layout, V); });
    const bool channels_inner = ChannelLayout(layout_name);
    // Weights: OIHW as given for NCHW; (oc, kw, kh, ic) with output channels innermost otherwise.
    ImageParam Wt = prog.AddInput(1, 4, "w", [channels_inner](const Tensor& t) {
      if (!channels_inner) return ToHalide(t);
      const int OC = int(t.shape[0]), IC = int(t.shape[1]), KH = int(t.shape[2]), KW = int(t.shape[3]);
      Buffer<float> b(OC, KW, KH, IC);
      for (int o = 0; o < OC; ++o)
        for (int i = 0; i < IC; ++i)
          for (int h = 0; h < KH; ++h)
            for (int w = 0; w < KW; ++w) b(o, w, h, i) = t.data[((size_t(o) * IC + i) * KH + h) * KW + w];
      return b;
    });
    Var oc("oc"), x("x"), y("y"), n("n");
    // Logical input with zero padding.
    auto load = [&](Expr c, Expr w, Expr h) {
      Expr cw = clamp(w, 0, p.W - 1), ch = clamp(h, 0, p.H - 1);
      Expr v = layout == Layout4d::kNCHW ? X(cw, ch, c, n) : layout == Layout4d::kNHWC ? X(c, cw, ch, n) : X(c % V, cw, ch, c / V, n);
      if (!p.Padded()) return v;
      return select(w >= 0 && w < p.W && h >= 0 && h < p.H, v, 0.f);
    };
    RDom r(0, p.Cg, 0, p.KW, 0, p.KH, "r");
    RVar ric = r.x, rkw = r.y, rkh = r.z;
    Expr group = p.G == 1 ? Expr(0) : oc / p.OCg;
    Expr in = load(group * p.Cg + ric, x * p.sw - p.pw + rkw * p.dw, y * p.sh - p.ph + rkh * p.dh);
    Expr wv = channels_inner ? Wt(oc, rkw, rkh, ric) : Wt(rkw, rkh, ric, oc);
    Func acc("acc"), conv("conv"), out("conv_out");
    acc(oc, x, y, n) = 0.f;
    acc(oc, x, y, n) += in * wv;
    Expr value = acc(oc, x, y, n);
    if (p.bias) {
      ImageParam B = prog.AddInputView(2, 1, "bias", {p.OC});
      value = value + B(oc);
    }
    conv(oc, x, y, n) = value;
    // The output in the working layout.
    Var c("c"), cb("cb");
    if (layout == Layout4d::kNCHW) out(x, y, oc, n) = conv(oc, x, y, n);
    else if (layout == Layout4d::kNHWC) out(oc, x, y, n) = conv(oc, x, y, n);
    else out(c, x, y, cb, n) = conv(cb * V + c, x, y, n);

    Var xo("xo"), xi("xi"), oco("oco"), oci("oci"), rows("rows"), task("task");
    auto reorder_reduction = [&](Stage s, std::vector<VarOrRVar> inner) {
      std::vector<VarOrRVar> order = inner;
      if (TextKnob(policy, "reduce_order", "c_outer") == "c_outer") order.insert(order.end(), {rkw, rkh, ric});
      else order.insert(order.end(), {ric, rkw, rkh});
      s.reorder(order);
    };
    if (layout == Layout4d::kNCHW) {
      // Vectors along x, rows of output channels.
      out.bound(x, 0, p.OW).bound(y, 0, p.OH).bound(oc, 0, p.OC).bound(n, 0, p.N);
      out.split(x, xo, xi, vt * V, TailStrategy::GuardWithIf).split(oc, oco, oci, rt, TailStrategy::ShiftInwards)
          .reorder(xi, oci, xo, oco, y, n).vectorize(xi, V).unroll(oci);
      out.fuse(oco, y, rows).fuse(rows, n, task);
      if (IntKnob(policy, "parallel", 0)) out.parallel(task);
      acc.compute_at(out, xo).reorder(x, oc).vectorize(x, V).unroll(x).unroll(oc);
      Stage u = acc.update();
      reorder_reduction(u, {x, oc});
      u.vectorize(x, V).unroll(x).unroll(oc);
      if (IntKnob(policy, "unroll_kw", 0)) u.unroll(rkw);
    } else {
      // Vectors along output channels, rows of output positions.
      Var co("co"), ci("ci");
      if (layout == Layout4d::kNHWC) {
        out.bound(oc, 0, p.OC).bound(x, 0, p.OW).bound(y, 0, p.OH).bound(n, 0, p.N);
        out.split(oc, co, ci, vt * V).split(x, xo, xi, rt, TailStrategy::ShiftInwards).reorder(ci, xi, co, xo, y, n)
            .vectorize(ci, V).unroll(xi);
        out.fuse(xo, y, rows).fuse(rows, n, task);
        acc.compute_at(out, co);
      } else {
        out.bound(c, 0, V).bound(x, 0, p.OW).bound(y, 0, p.OH).bound(cb, 0, p.OC / V).bound(n, 0, p.N);
        out.split(cb, co, ci, vt).split(x, xo, xi, rt, TailStrategy::ShiftInwards).reorder(c, ci, xi, co, xo, y, n)
            .vectorize(c).unroll(ci).unroll(xi);
        out.fuse(xo, y, rows).fuse(rows, n, task);
        acc.compute_at(out, co);
      }
      if (IntKnob(policy, "parallel", 0)) out.parallel(task);
      acc.reorder(oc, x).vectorize(oc, V).unroll(oc).unroll(x);
      Stage u = acc.update();
      reorder_reduction(u, {oc, x});
      u.vectorize(oc, V).unroll(oc).unroll(x);
      if (IntKnob(policy, "unroll_kw", 0)) u.unroll(rkw);
    }
    prog.pipeline = Pipeline(out);
    if (layout == Layout4d::kNCHW) prog.output_extents = {p.OW, p.OH, p.OC, p.N};
    else if (layout == Layout4d::kNHWC) prog.output_extents = {p.OC, p.OW, p.OH, p.N};
    else prog.output_extents = {V, p.OW, p.OH, p.OC / V, p.N};
    prog.output_shape = op.outputs[0].shape;
    prog.fetch = [layout, V](const Buffer<float>& b, const std::vector<int64_t>& shape, Tensor* t) { FromLayout(b, layout, V, shape, t); };
    return prog;
  }
};

}  // namespace

const OpTemplate& ConvDirectTemplate() {
  static const class ConvDirectTemplate t;
  return t;
}

}  // namespace tilebank::engine
