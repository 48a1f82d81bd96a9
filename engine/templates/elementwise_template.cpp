// elementwise.generic: Add, Sub, Mul, Div (numpy broadcasting), Relu, Sigmoid, Tanh, Gelu, Erf, Clip,
// HardSigmoid, HardSwish.
#include <cmath>

#include "engine/builder/halide_program.h"
#include "engine/ops/reference.h"
#include "engine/templates/rowwise_schedule.h"
#include "engine/templates/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

// f(x) = z P(z^2) / Q(z^2) with z = x clamped to [-limit, limit], where f(limit) rounds to 1
// in float: the odd rational fits of scripts/fit_rational.py (P of degree 6, Q of degree 4).
// The reciprocal is the CPU's estimate refined by one Newton step: a division costs more.
Expr OddRational(Expr x, float limit, const float (&p)[7], const float (&q)[5]) {
  Expr z = clamp(x, -limit, limit);
  Expr t = z * z;
  Expr num = p[6], den = q[4];
  for (int k = 5; k >= 0; --k) num = num * t + p[k];
  for (int k = 3; k >= 0; --k) den = den * t + q[k];
  Expr estimate = fast_inverse(den);
  return z * num * (estimate * (2.f - den * estimate));
}

// Within 4e-8 of erf in exact arithmetic, 3e-7 evaluated in float; half the vector operations
// of a form with an exponential.
Expr Erf(Expr x) {
  static const float p[7] = {1.128378749e+00f, 2.041965872e-01f, 5.114513636e-02f, 3.895038273e-03f,
                             1.474421006e-04f, -1.996754918e-06f, 2.011863920e-08f};
  static const float q[5] = {1.f, 5.142935514e-01f, 1.167737767e-01f, 1.472804137e-02f, 1.006291248e-03f};
  return OddRational(x, 3.9f, p, q);
}

// Within 1e-10 of tanh in exact arithmetic, 3e-7 evaluated in float (Halide's tanh calls the
// scalar libm function for each element: 40x slower).
Expr Tanh(Expr x) {
  static const float p[7] = {1.f, 1.385317445e-01f, 4.090772010e-03f, 3.292746624e-05f,
                             4.551150568e-08f, -3.146777283e-11f, 2.543560828e-14f};
  static const float q[5] = {1.f, 4.718650579e-01f, 2.804579958e-02f, 4.344361369e-04f, 1.664220463e-06f};
  return OddRational(x, 9.f, p, q);
}

RowShape ShapeOf(const OpSpec& op) {
  const auto& out = op.outputs[0].shape;
  RowShape s;
  s.inner = out.empty() ? 1 : out.back();
  s.rows = Tensor::NumElements(out) / s.inner;
  return s;
}

class ElementwiseTemplate : public HalideTemplate {
 public:
  const char* id() const override { return "elementwise.generic"; }
  std::vector<std::string> OpTypes() const override {
    std::vector<std::string> types = BinaryElementwiseOps(), unary = UnaryElementwiseOps();
    types.insert(types.end(), unary.begin(), unary.end());
    return types;
  }
  Status SupportsInstance(const OpSpec& op) const override {
    bool binary = IsBinaryElementwiseOp(op.op_type);
    if (op.inputs.size() != (binary ? 2u : 1u)) return Status::InvalidInput(op.name + ": " + op.op_type + " takes " + (binary ? "two inputs" : "one input"));
    std::vector<int64_t> shape = op.inputs[0].shape;
    if (binary && !BroadcastShapes(op.inputs[0].shape, op.inputs[1].shape, &shape))
      return Status::InvalidInput(op.name + ": input_desc shapes do not broadcast");
    if (shape != op.outputs[0].shape) return Status::InvalidInput(op.name + ": output_desc[0].shape does not match the broadcast inputs");
    if (shape.size() > 6) return Status::InvalidInput(op.name + ": rank above 6 is not supported");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec& op) const override { return RowwiseSpace(ShapeOf(op)); }
  Policy DefaultPolicy(const OpSpec& op) const override { return RowwiseDefault(ShapeOf(op)); }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    HalideProgram prog;
    const auto& out_shape = op.outputs[0].shape;
    // At least two Halide dimensions (inner, row); missing outer ones have extent 1.
    const int rank = std::max<int>(2, static_cast<int>(out_shape.size()));
    auto extent = [&](int d) { return d < static_cast<int>(out_shape.size()) ? static_cast<int>(out_shape[out_shape.size() - 1 - d]) : 1; };
    // Halide vars, innermost first: v[0] is the last dimension.
    std::vector<Var> v;
    for (int d = 0; d < rank; ++d) v.push_back(Var("d" + std::to_string(d)));
    auto load = [&](int input) {
      const auto& s = op.inputs[input].shape;
      ImageParam p = prog.AddInput(input, std::max<int>(1, static_cast<int>(s.size())), "in" + std::to_string(input));
      std::vector<Expr> idx;
      for (int d = 0; d < static_cast<int>(s.size()); ++d) {
        int64_t extent = s[s.size() - 1 - d];
        int64_t out_extent = out_shape[out_shape.size() - 1 - d];
        idx.push_back(extent == 1 && out_extent != 1 ? Expr(0) : Expr(v[d]));
      }
      if (idx.empty()) idx.push_back(0);
      return p(idx);
    };
    Expr a = load(0);
    Expr value;
    const std::string& t = op.op_type;
    if (IsBinaryElementwiseOp(t)) {
      Expr b = load(1);
      value = t == "Add" ? a + b : t == "Sub" ? a - b : t == "Mul" ? a * b : a / b;
    } else if (t == "Relu") {
      value = max(a, 0.f);
    } else if (t == "Sigmoid") {
      value = 1.f / (1.f + exp(-a));
    } else if (t == "Tanh") {
      value = Tanh(a);
    } else if (t == "Erf") {
      value = Erf(a);
    } else if (t == "HardSigmoid" || t == "HardSwish") {
      // ONNX: HardSigmoid = max(0, min(1, alpha x + beta)) (alpha 0.2, beta 0.5); HardSwish = x HardSigmoid(x) with alpha 1/6.
      const float alpha = t == "HardSwish" ? 1.f / 6 : static_cast<float>(op.Real("alpha", 0.2)), beta = t == "HardSwish" ? 0.5f : static_cast<float>(op.Real("beta", 0.5));
      value = clamp(alpha * a + beta, 0.f, 1.f);
      if (t == "HardSwish") value = a * value;
    } else if (t == "Clip") {
      value = a;
      if (op.attrs.contains("min")) value = max(value, static_cast<float>(op.Real("min", 0)));
      if (op.attrs.contains("max")) value = min(value, static_cast<float>(op.Real("max", 0)));
    } else if (op.Text("approximate", "none") == "tanh") {
      value = 0.5f * a * (1.f + Tanh(0.7978845608f * (a + 0.044715f * a * a * a)));
    } else {
      value = 0.5f * a * (1.f + Erf(a * 0.70710678f));
    }
    Func out("elementwise");
    std::vector<Var> args(v.begin(), v.end());
    out(args) = value;
    RowShape shape = ShapeOf(op);
    for (int d = 0; d < rank; ++d) out.bound(v[d], 0, extent(d));
    Var row = v[1];
    for (int d = 2; d < rank; ++d) {
      Var fused("rows" + std::to_string(d));
      out.fuse(row, v[d], fused);
      row = fused;
    }
    ScheduleRows(out, v[0], row, shape, policy);
    prog.pipeline = Pipeline(out);
    for (int d = 0; d < rank; ++d) prog.output_extents.push_back(extent(d));
    prog.output_shape = out_shape;
    return prog;
  }
};

}  // namespace

const OpTemplate& ElementwiseTemplate() {
  static const class ElementwiseTemplate t;
  return t;
}

}  // namespace tilebank::engine
