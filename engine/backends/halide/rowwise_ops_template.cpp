// softmax.rowwise, layernorm.rowwise and reduce.generic: operators that reduce along a row
// (the last axes) and may write the row back normalized. All use engine/backends/halide/rowwise_schedule.h, plus
// their own algorithmic knobs: Softmax's exp_store (keep exp(x - max) per row, or recompute it;
// the exponential is engine/backends/halide/exp_non_positive.h, as x - max <= 0) and LayerNorm's variance (two
// passes, or one pass over x and x^2). Softmax over an axis that is not the last normalizes
// columns instead, vectorized across the axes after it; ReduceSum with no axes and
// noop_with_empty_axes is a copy.
#include <algorithm>
#include <limits>

#include "engine/backends/halide/exp_non_positive.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/core/host_facts.h"
#include "engine/backends/halide/layout.h"
#include "engine/backends/halide/rowwise_schedule.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

// Softmax's exp(x - max) where x is NaN or the row's max is infinite (a +inf, or only -infs): NaN
// (so is the whole row, through the sum), as ONNX's reference and ONNX Runtime compute it. Tested on
// the loaded value and the max: under Halide's fast math a NaN of x - max may be assumed away.
Expr KeepNaN(Expr loaded, Expr max, Expr exp) {
  return select(is_nan(loaded) || is_inf(max), Expr(std::numeric_limits<float>::quiet_NaN()), exp);
}

// The input viewed as (len, rows) with the normalized axes innermost, or for Reduce as
// (inner, len, outer) around a contiguous run of reduced axes.
struct RowView {
  int64_t inner = 1, len = 1, outer = 1;
};

Result<RowView> ViewOf(const OpSpec& op) {
  const auto& s = op.inputs[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t begin = 0, end = 0;
  if (op.op_type == "Softmax") {
    begin = op.Int("axis", rank - 1), end = begin + 1;
  } else if (op.op_type == "LayerNormalization") {
    begin = op.Int("axis", rank - 1), end = rank;
  } else {
    auto axes = op.Ints("axes", {});
    if (axes.empty() && op.Int("noop_with_empty_axes", 0)) return RowView{1, 1, Tensor::NumElements(s)};  // a copy
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    std::sort(axes.begin(), axes.end());
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1) return Status::InvalidInput(op.name + ": reducing non-adjacent axes is not supported yet");
    begin = axes.front(), end = axes.back() + 1;
  }
  if (begin < 0 || end > rank || begin >= end) return Status::InvalidInput(op.name + ": axis out of range");
  RowView v;
  for (int64_t i = 0; i < rank; ++i) (i < begin ? v.outer : i < end ? v.len : v.inner) *= s[i];
  return v;
}

RowShape RowwiseShape(const OpSpec& op) {
  RowView v = ViewOf(op).value();
  RowShape s;
  if (op.op_type.rfind("Reduce", 0) == 0 || v.inner > 1) {  // a reduction across rows of `inner`
    s.inner = v.inner, s.rows = v.outer, s.reduce = v.inner == 1 ? v.len : 0, s.span = v.len;
  } else {
    s.inner = v.len, s.rows = v.outer, s.reduce = v.len;
  }
  return s;
}

class RowwiseTemplate : public HalideTemplate {
 public:
  RowwiseTemplate(const char* id, std::vector<std::string> types) : id_(id), types_(std::move(types)) {}
  const char* id() const override { return id_; }

  std::vector<std::string> OpTypes() const override { return types_; }
  Status SupportsInstance(const OpSpec& op) const override {
    if (op.inputs.empty()) return Status::InvalidInput(op.name + ": needs an input");
    auto v = ViewOf(op);
    if (!v.ok()) return v.status();
    int64_t out = Tensor::NumElements(op.outputs[0].shape);
    bool reduce = op.op_type.rfind("Reduce", 0) == 0;
    if (reduce ? out != v->inner * v->outer : out != v->inner * v->len * v->outer)
      return Status::InvalidInput(op.name + ": output_desc[0].shape does not match input_desc[0].shape and the axes");
    if (op.op_type == "LayerNormalization") {
      if (op.inputs.size() < 2) return Status::InvalidInput(op.name + ": LayerNormalization needs a scale input");
      for (size_t i = 1; i < op.inputs.size(); ++i)
        if (Tensor::NumElements(op.inputs[i].shape) != v->len) return Status::InvalidInput(op.name + ": scale and bias must match the normalized axes");
    } else if (op.inputs.size() != 1) {
      return Status::InvalidInput(op.name + ": " + op.op_type + " takes one input (axes as an attribute)");
    }
    return Status::Ok();
  }

  SearchSpace Space(const OpSpec& op) const override {
    SearchSpace space = RowwiseSpace(RowwiseShape(op));
    if (op.op_type == "Softmax") space.knobs.push_back({"exp_store", {std::string("row"), std::string("inline")}, TuneMode::kSchedule});
    if (op.op_type == "LayerNormalization")
      space.knobs.push_back({"variance", {std::string("two_pass"), std::string("one_pass")}, TuneMode::kSchedule});
    return space;
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    Policy p = RowwiseDefault(RowwiseShape(op));
    if (op.op_type == "Softmax") p.push_back({"exp_store", std::string("row")});
    if (op.op_type == "LayerNormalization") p.push_back({"variance", std::string("two_pass")});
    return MakePolicy(p);
  }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    RowView v = ViewOf(op).value();
    RowShape shape = RowwiseShape(op);
    HalideProgram prog;
    prog.output_shape = op.outputs[0].shape;
    if (op.op_type.rfind("Reduce", 0) == 0) return DefineReduce(op, policy, v, shape, prog);
    if (v.inner > 1) return DefineStridedSoftmax(policy, v, shape, prog);
    const int len = static_cast<int>(v.len), rows = static_cast<int>(v.outer);
    ImageParam x = prog.AddInputView(0, 2, "x", {len, rows});
    Var r("r"), o("o");
    RDom k(0, len, "k");
    Func out(op.op_type == "Softmax" ? "softmax" : "layernorm");
    std::vector<std::pair<Func, RVar>> reductions;
    Func per_row_stage;
    if (op.op_type == "Softmax") {
      Func mx("row_max"), e("exp"), sum("row_sum");
      mx(o) = -std::numeric_limits<float>::infinity();
      mx(o) = max(mx(o), x(k, o));
      e(r, o) = KeepNaN(x(r, o), mx(o), ExpNonPositive(x(r, o) - mx(o)));
      sum(o) = 0.f;
      sum(o) += e(k, o);
      out(r, o) = e(r, o) * (1.f / sum(o));
      reductions = {{mx, k.x}, {sum, k.x}};
      if (TextKnob(policy, "exp_store", "row") == "row") per_row_stage = e;
    } else {
      ImageParam scale = prog.AddInputView(1, 1, "scale", {len});
      Func mean("mean"), var("variance");
      Func sum("row_sum");
      sum(o) = 0.f;
      sum(o) += x(k, o);
      mean(o) = sum(o) / float(len);
      Func sq("row_sq");
      sq(o) = 0.f;
      if (TextKnob(policy, "variance", "two_pass") == "two_pass") {
        sq(o) += (x(k, o) - mean(o)) * (x(k, o) - mean(o));
        var(o) = sq(o) / float(len);
      } else {
        sq(o) += x(k, o) * x(k, o);
        var(o) = max(sq(o) / float(len) - mean(o) * mean(o), 0.f);
      }
      Func inv("inv_std");
      inv(o) = 1.f / sqrt(var(o) + static_cast<float>(op.Real("epsilon", 1e-5)));
      Expr value = (x(r, o) - mean(o)) * inv(o) * scale(r);
      if (op.inputs.size() > 2) {
        ImageParam bias = prog.AddInputView(2, 1, "bias", {len});
        value = value + bias(r);
      }
      out(r, o) = value;
      reductions = {{sum, k.x}, {sq, k.x}};
      per_row_stage = inv;
    }
    out.bound(r, 0, len).bound(o, 0, rows);
    Var at = ScheduleRows(out, r, o, shape, policy);
    for (auto& [f, rv] : reductions) ScheduleRowReduction(f, rv, out, at, shape, policy);
    if (per_row_stage.defined()) {
      per_row_stage.compute_at(out, at);
      if (per_row_stage.dimensions() == 2) per_row_stage.vectorize(per_row_stage.args()[0], Host().vector_floats, TailStrategy::GuardWithIf);
    }
    prog.pipeline = Pipeline(out);
    prog.output_extents = {len, rows};
    return prog;
  }

 private:
  HalideProgram DefineReduce(const OpSpec& op, const Policy& policy, const RowView& v, const RowShape& shape, HalideProgram& prog) const {
    const int inner = static_cast<int>(v.inner), len = static_cast<int>(v.len), outer = static_cast<int>(v.outer);
    ImageParam x = prog.AddInputView(0, 3, "x", {inner, len, outer});
    Var i("i"), o("o");
    RDom k(0, len, "k");
    Func acc("acc"), out("reduce");
    const bool is_max = op.op_type == "ReduceMax";
    acc(i, o) = is_max ? Expr(-std::numeric_limits<float>::infinity()) : Expr(0.f);
    const bool is_l2 = op.op_type == "ReduceL2";
    acc(i, o) = is_max ? max(acc(i, o), x(i, k, o)) : acc(i, o) + (is_l2 ? x(i, k, o) * x(i, k, o) : x(i, k, o));
    out(i, o) = op.op_type == "ReduceMean" ? acc(i, o) / float(len) : is_l2 ? sqrt(acc(i, o)) : acc(i, o);
    out.bound(i, 0, inner).bound(o, 0, outer);
    Var at = ScheduleRows(out, i, o, shape, policy);
    if (inner == 1) {
      ScheduleRowReduction(acc, k.x, out, at, shape, policy);
    } else {
      acc.compute_at(out, at);
      if (inner >= Host().vector_floats) {
        acc.vectorize(i, Host().vector_floats, TailStrategy::GuardWithIf);
        acc.update().reorder(i, k.x).vectorize(i, Host().vector_floats, TailStrategy::GuardWithIf);
      }
    }
    prog.pipeline = Pipeline(out);
    prog.output_extents = {inner, outer};
    return std::move(prog);
  }

  // Softmax over an axis that is not the last: x viewed as (inner, len, outer); each of the
  // inner x outer columns is normalized along len, vectorized across inner.
  HalideProgram DefineStridedSoftmax(const Policy& policy, const RowView& v, const RowShape& shape, HalideProgram& prog) const {
    const int inner = static_cast<int>(v.inner), len = static_cast<int>(v.len), outer = static_cast<int>(v.outer);
    ImageParam x = prog.AddInputView(0, 3, "x", {inner, len, outer});
    Var i("i"), r("r"), o("o");
    RDom k(0, len, "k");
    Func mx("col_max"), e("exp"), sum("col_sum"), out("softmax");
    mx(i, o) = -std::numeric_limits<float>::infinity();
    mx(i, o) = max(mx(i, o), x(i, k, o));
    e(i, r, o) = KeepNaN(x(i, r, o), mx(i, o), ExpNonPositive(x(i, r, o) - mx(i, o)));
    sum(i, o) = 0.f;
    sum(i, o) += e(i, k, o);
    out(i, r, o) = e(i, r, o) * (1.f / sum(i, o));
    out.bound(i, 0, inner).bound(r, 0, len).bound(o, 0, outer);
    Var at = ScheduleRows(out, i, o, shape, policy);
    const int V = Host().vector_floats;
    for (Func f : {mx, sum}) {
      f.compute_at(out, at);
      if (inner >= V) f.vectorize(i, V, TailStrategy::GuardWithIf).update().reorder(i, k.x).vectorize(i, V, TailStrategy::GuardWithIf);
    }
    if (TextKnob(policy, "exp_store", "row") == "row") {
      e.compute_at(out, at);
      if (inner >= V) e.vectorize(i, V, TailStrategy::GuardWithIf);
    }
    prog.pipeline = Pipeline(out);
    prog.output_extents = {inner, len, outer};
    return std::move(prog);
  }

  const char* id_;
  std::vector<std::string> types_;
};

}  // namespace

const OpTemplate& SoftmaxTemplate() {
  static const RowwiseTemplate t("softmax.rowwise", {"Softmax"});
  return t;
}
const OpTemplate& LayerNormTemplate() {
  static const RowwiseTemplate t("layernorm.rowwise", {"LayerNormalization"});
  return t;
}
const OpTemplate& ReduceTemplate() {
  static const RowwiseTemplate t("reduce.generic", {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2"});
  return t;
}

}  // namespace tilebank::engine
