// softmax.simd: Softmax over the last axis by a hand-written Highway kernel
// (engine/backends/simd/softmax_rows_simd.h), an Impl alternative to the Halide template softmax.rowwise. The
// pipeline is one Halide extern stage split into blocks of rows, so the blocks run on Halide's
// thread pool like every other kernel's tasks and the program goes through the compile cache.
// Knobs: rows_per_task, parallel, store (in_place or streaming), prefetch (the next row).
#include <algorithm>

#include "engine/backends/halide/halide_program.h"
#include "engine/backends/library_impls.h"
#include "engine/core/host_facts.h"
#include "engine/backends/halide/layout.h"
#include "engine/backends/simd/softmax_rows_simd.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

// The extern stage: softmax of the rows of `out`'s region of `x` (x is (len, rows), a row is
// contiguous), clipped to the op's `rows` (a split's last block may reach past them). In a bounds
// query it asks for the same rows of x, whole.
extern "C" int tilebank_softmax_rows(halide_buffer_t* x, int32_t rows, int32_t streaming, int32_t prefetch, halide_buffer_t* out) {
  const int32_t first = out->dim[1].min;
  const int32_t count = std::max(0, std::min(out->dim[1].extent, rows - first));
  if (x->is_bounds_query() || out->is_bounds_query()) {
    x->dim[0].min = 0, x->dim[0].extent = out->dim[0].extent;
    x->dim[1].min = first, x->dim[1].extent = std::max(count, 1);
    return 0;
  }
  const float* in = reinterpret_cast<const float*>(x->host) + int64_t(first - x->dim[1].min) * x->dim[1].stride;
  SoftmaxRowsOptions options;
  options.store = streaming ? SoftmaxStore::kStreaming : SoftmaxStore::kInPlace;
  options.prefetch_next_row = prefetch != 0;
  SoftmaxRowsSimd(in, reinterpret_cast<float*>(out->host), count, out->dim[0].extent, x->dim[1].stride, out->dim[1].stride, options);
  return 0;
}

struct Rows {
  int64_t len = 1, rows = 1;
};

Rows RowsOf(const OpSpec& op) {
  Rows r;
  const auto& s = op.inputs[0].shape;
  if (!s.empty()) r.len = s.back();
  r.rows = Tensor::NumElements(s) / std::max<int64_t>(r.len, 1);
  return r;
}

class SoftmaxSimd : public HalideTemplate {
 public:
  const char* id() const override { return "softmax.simd"; }
  std::vector<std::string> OpTypes() const override { return {"Softmax"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    if (op.inputs.size() != 1 || op.outputs.empty()) return Status::InvalidInput(op.name + ": Softmax takes one input");
    const int64_t rank = static_cast<int64_t>(op.inputs[0].shape.size());
    const int64_t axis = op.Int("axis", -1);
    if (rank == 0 || (axis != -1 && axis != rank - 1)) return Status::InvalidInput("softmax.simd: " + op.name + ": only the last axis is supported");
    if (op.outputs[0].shape != op.inputs[0].shape) return Status::InvalidInput(op.name + ": output_desc[0].shape does not match input_desc[0].shape");
    const Rows r = RowsOf(op);
    if (r.len < 1 || r.rows > INT32_MAX || r.len * r.rows > INT32_MAX) return Status::InvalidInput("softmax.simd: " + op.name + " is empty or too large");
    return Status::Ok();
  }

  SearchSpace Space(const OpSpec& op) const override {
    const Rows shape = RowsOf(op);
    SearchSpace space;
    space.knobs = {
        {"rows_per_task", IntValues({1, 2, 4, 8, 16, 32, 64, 128}), TuneMode::kSchedule},
        {"parallel", IntValues({0, 1}), TuneMode::kSchedule},
        {"store", {std::string("in_place"), std::string("streaming")}, TuneMode::kSchedule},
        {"prefetch", IntValues({0, 1}), TuneMode::kSchedule},
    };
    space.valid = [shape](const Policy& p) {
      const int64_t rpt = IntKnob(p, "rows_per_task", 1);
      if (!IntKnob(p, "parallel", 0)) return rpt == 1 || rpt < shape.rows * 2;  // blocks only matter for the prefetch
      return shape.rows >= 2 && rpt < shape.rows;  // at least two tasks
    };
    return space;
  }

  // Blocks of up to 128K elements, at least two per core; non-temporal stores once the output is
  // well past what the cores' L2 caches hold (it would not be read back from cache anyway).
  Policy DefaultPolicy(const OpSpec& op) const override {
    const Rows shape = RowsOf(op);
    const int64_t cores = Host().cores;
    int64_t rpt = 1;
    while (rpt < 128 && rpt * 2 * 2 * cores <= shape.rows && rpt * 2 * shape.len <= 131072) rpt *= 2;
    const bool parallel = shape.rows >= 2 && shape.rows * shape.len > 65536;
    const bool streaming = shape.rows * shape.len * int64_t{sizeof(float)} > 4 * cores * Host().l2_bytes;
    return MakePolicy({{"rows_per_task", parallel ? rpt : int64_t{1}}, {"parallel", int64_t{parallel}},
                       {"store", std::string(streaming ? "streaming" : "in_place")}, {"prefetch", int64_t{1}}});
  }

 protected:
  HalideProgram Define(const OpSpec& op, const Policy& policy) const override {
    const Rows shape = RowsOf(op);
    const int len = static_cast<int>(shape.len), rows = static_cast<int>(shape.rows);
    HalideProgram prog;
    prog.output_shape = op.outputs[0].shape;
    prog.output_extents = {len, rows};
    ImageParam x = prog.AddInputView(0, 2, "x", {len, rows});
    Func out("softmax_simd");
    Var i("i"), o("o"), task("task"), in_task("in_task");
    std::vector<ExternFuncArgument> args = {x, Expr(rows), Expr(TextKnob(policy, "store", "in_place") == "streaming" ? 1 : 0),
                                            Expr(static_cast<int32_t>(IntKnob(policy, "prefetch", 0)))};
    out.define_extern("tilebank_softmax_rows", args, Float(32), {i, o}, NameMangling::C);
    out.bound(i, 0, len).bound(o, 0, rows);
    const int rpt = static_cast<int>(std::min<int64_t>(IntKnob(policy, "rows_per_task", 1), rows));
    const bool parallel = IntKnob(policy, "parallel", 0) != 0;
    if (rpt > 1) {
      out.split(o, task, in_task, rpt, TailStrategy::GuardWithIf);
      if (parallel) out.parallel(task);
    } else if (parallel) {
      out.parallel(o);
    }
    prog.pipeline = Pipeline(out);
    prog.pipeline.set_jit_externs({{"tilebank_softmax_rows", JITExtern{tilebank_softmax_rows}}});
    return prog;
  }
};

}  // namespace

const OpTemplate& SoftmaxSimdTemplate() {
  static const SoftmaxSimd t;
  return t;
}

}  // namespace tilebank::engine
