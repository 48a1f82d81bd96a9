// pool2d.generic: MaxPool, AveragePool (count_include_pad, ceil_mode, dilations) and
// the global pools on NCHW, rows of output width vectorized, window loops unrollable.
#include <limits>

#include "engine/backends/halide/halide_program.h"
#include "engine/backends/halide/rowwise_schedule.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

struct PoolParams {
  int64_t kh, kw, sh, sw, dh, dw, ph0, pw0, ph1, pw1;
};

PoolParams ParamsOf(const OpSpec& op) {
  const auto& s = op.inputs[0].shape;
  if (op.op_type == "GlobalAveragePool" || op.op_type == "GlobalMaxPool") return {s[2], s[3], 1, 1, 1, 1, 0, 0, 0, 0};
  auto k = op.Ints("kernel_shape", {1, 1}), st = op.Ints("strides", {1, 1}), d = op.Ints("dilations", {1, 1}),
       p = op.Ints("pads", {0, 0, 0, 0});
  return {k[0], k[1], st[0], st[1], d[0], d[1], p[0], p[1], p[2], p[3]};
}

RowShape PoolRowShape(const OpSpec& op) {
  const auto& o = op.outputs[0].shape;
  RowShape s;
  s.inner = o[3];
  s.rows = o[0] * o[1] * o[2];
  return s;
}

class PoolTemplate : public HalideTemplate {
 public:
  const char* id() const override { return "pool2d.generic"; }
  std::vector<std::string> OpTypes() const override { return {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    if (op.inputs.size() != 1 || op.inputs[0].shape.size() != 4 || op.outputs[0].shape.size() != 4)
      return Status::InvalidInput(op.name + ": 2-D pooling of one NCHW input is supported");
    if (op.Text("auto_pad", "NOTSET") != "NOTSET") return Status::InvalidInput(op.name + ": auto_pad " + op.Text("auto_pad", "") + " is not an ONNX mode");
    if (op.outputs.size() > 1) return Status::InvalidInput(op.name + ": MaxPool's indices output is not supported");
    const auto& s = op.inputs[0].shape;
    const auto& o = op.outputs[0].shape;
    PoolParams p = ParamsOf(op);
    auto out_len = [&](int64_t in, int64_t k, int64_t st, int64_t d, int64_t pa, int64_t pb) {
      int64_t span = in + pa + pb - ((k - 1) * d + 1);
      return (op.Int("ceil_mode", 0) ? (span + st - 1) / st : span / st) + 1;
    };
    if (o[0] != s[0] || o[1] != s[1] || o[2] != out_len(s[2], p.kh, p.sh, p.dh, p.ph0, p.ph1) ||
        o[3] != out_len(s[3], p.kw, p.sw, p.dw, p.pw0, p.pw1))
      return Status::InvalidInput(op.name + ": output_desc[0].shape does not match the kernel, strides and pads");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec& op) const override {
    SearchSpace space = RowwiseSpace(PoolRowShape(op));
    space.knobs.push_back({"unroll_window", {int64_t{0}, int64_t{1}}, TuneMode::kSchedule});
    auto base = space.valid;
    PoolParams p = ParamsOf(op);
    space.valid = [base, p](const Policy& policy) { return base(policy) && !(IntKnob(policy, "unroll_window", 0) && p.kw > 8); };
    return space;
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    Policy p = RowwiseDefault(PoolRowShape(op));
    p.push_back({"unroll_window", int64_t{0}});
    return MakePolicy(p);
  }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    HalideProgram prog;
    const auto& s = op.inputs[0].shape;
    const auto& o = op.outputs[0].shape;
    const int H = static_cast<int>(s[2]), W = static_cast<int>(s[3]);
    PoolParams p = ParamsOf(op);
    ImageParam in = prog.AddInput(0, 4, "x");
    Var x("ow"), y("oh"), c("c"), n("n");
    RDom win(0, static_cast<int>(p.kw), 0, static_cast<int>(p.kh), "win");
    Expr ix = x * int(p.sw) - int(p.pw0) + win.x * int(p.dw);
    Expr iy = y * int(p.sh) - int(p.ph0) + win.y * int(p.dh);
    Expr inside = ix >= 0 && ix < W && iy >= 0 && iy < H;
    Expr value = in(clamp(ix, 0, W - 1), clamp(iy, 0, H - 1), c, n);
    Func acc("acc"), out("pool");
    const bool is_max = op.op_type == "MaxPool" || op.op_type == "GlobalMaxPool";
    if (is_max) {
      acc(x, y, c, n) = -std::numeric_limits<float>::infinity();
      acc(x, y, c, n) = select(inside, max(acc(x, y, c, n), value), acc(x, y, c, n));
      out(x, y, c, n) = acc(x, y, c, n);
    } else {
      acc(x, y, c, n) = 0.f;
      acc(x, y, c, n) += select(inside, value, 0.f);
      // Window positions counted: inside the input, or inside the explicit padding when asked.
      Expr lo_x = x * int(p.sw) - int(p.pw0), lo_y = y * int(p.sh) - int(p.ph0);
      const bool include_pad = op.Int("count_include_pad", 0) != 0;
      int64_t min_x = include_pad ? -p.pw0 : 0, max_x = include_pad ? W + p.pw1 : W;
      int64_t min_y = include_pad ? -p.ph0 : 0, max_y = include_pad ? H + p.ph1 : H;
      auto count = [](Expr lo, int64_t k, int64_t d, int64_t a, int64_t b) {
        // positions lo + i*d in [a, b) for i in [0, k)
        Expr first = max(0, (int(a) - lo + int(d) - 1) / int(d));
        Expr last = min(int(k) - 1, (int(b) - 1 - lo) / int(d));
        return max(0, last - first + 1);
      };
      Expr cnt = count(lo_x, p.kw, p.dw, min_x, max_x) * count(lo_y, p.kh, p.dh, min_y, max_y);
      out(x, y, c, n) = acc(x, y, c, n) / cast<float>(max(cnt, 1));
    }
    out.bound(x, 0, static_cast<int>(o[3])).bound(y, 0, static_cast<int>(o[2])).bound(c, 0, static_cast<int>(o[1])).bound(n, 0, static_cast<int>(o[0]));
    Var yc("yc"), row("row");
    out.fuse(y, c, yc).fuse(yc, n, row);
    RowShape shape = PoolRowShape(op);
    ScheduleRows(out, x, row, shape, policy);
    if (IntKnob(policy, "unroll_window", 0)) acc.update().unroll(win.x);
    prog.pipeline = Pipeline(out);
    prog.output_extents = {static_cast<int>(o[3]), static_cast<int>(o[2]), static_cast<int>(o[1]), static_cast<int>(o[0])};
    prog.output_shape = o;
    return prog;
  }
};

}  // namespace

const OpTemplate& PoolTemplate() {
  static const class PoolTemplate t;
  return t;
}

}  // namespace tilebank::engine
