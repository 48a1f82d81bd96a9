// elementwise.generic: Add, Sub, Mul, Div (numpy broadcasting), Relu, Sigmoid, Tanh, Gelu, Erf, Clip,
// HardSigmoid, HardSwish.
#include <cmath>
#include <limits>
#include <set>

#include "engine/backends/halide/halide_program.h"
#include "engine/core/op_semantics.h"
#include "engine/backends/halide/halide_math.h"
#include "engine/core/broadcast.h"
#include "engine/backends/halide/rowwise_schedule.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

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
    std::vector<std::string> types = OpTypesOf(OpRole::kBinaryElementwise), unary = OpTypesOf(OpRole::kUnaryElementwise);
    types.insert(types.end(), unary.begin(), unary.end());
    return types;
  }
  Status SupportsInstance(const OpSpec& op) const override {
    bool binary = IsBinaryElementwiseOp(op.op_type);
    if (op.inputs.size() != (binary ? 2u : 1u)) return Status::InvalidInput(op.name + ": " + op.op_type + " takes " + (binary ? "two inputs" : "one input"));
    std::vector<int64_t> shape = op.inputs[0].shape;
    if (binary && !BroadcastShapes({op.inputs[0].shape, op.inputs[1].shape}, &shape))
      return Status::InvalidInput(op.name + ": input_desc shapes do not broadcast");
    if (shape != op.outputs[0].shape) return Status::InvalidInput(op.name + ": output_desc[0].shape does not match the broadcast inputs");
    if (shape.size() > 6) return Status::InvalidInput(op.name + ": rank above 6 is not supported");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec& op) const override { return RowwiseSpace(ShapeOf(op)); }
  // Sigmoid, Tanh, Erf and GELU take an exp, a tanh or an erf an element, about four loads' work:
  // their threads start from 16Ki elements (ConvLSTM's gates, 64x32x32: Sigmoid 42 -> 23 us).
  Policy DefaultPolicy(const OpSpec& op) const override {
    static const std::set<std::string> costly = {"Sigmoid", "Tanh", "Erf", "Gelu"};
    return RowwiseDefault(ShapeOf(op), costly.count(op.op_type) ? 4 : 1);
  }

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
    } else if (t == "HardSigmoid") {
      value = Activation(t, a, static_cast<float>(op.Real("alpha", 0.2)), static_cast<float>(op.Real("beta", 0.5)));
    } else if (t == "Clip") {
      const float inf = std::numeric_limits<float>::infinity();
      value = Activation(t, a, op.attrs.contains("min") ? static_cast<float>(op.Real("min", 0)) : -inf,
                         op.attrs.contains("max") ? static_cast<float>(op.Real("max", 0)) : inf);
    } else if (t == "Gelu" && op.Text("approximate", "none") == "tanh") {
      value = Activation("GeluTanh", a);
    } else {
      value = Activation(t, a);
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
