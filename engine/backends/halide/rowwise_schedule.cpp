#include "engine/backends/halide/rowwise_schedule.h"

#include <algorithm>

#include "engine/core/host_facts.h"

namespace tilebank::engine {

using namespace Halide;

SearchSpace RowwiseSpace(const RowShape& shape) {
  SearchSpace space;
  space.knobs = {
      {"vector", IntValues({1, 2, 4}), TuneMode::kSchedule},
      {"unroll", IntValues({1, 2, 4}), TuneMode::kSchedule},
      {"rows_per_task", IntValues({1, 2, 4, 8, 16, 32, 64, 128}), TuneMode::kSchedule},
      {"parallel", IntValues({0, 1}), TuneMode::kSchedule},
  };
  if (shape.reduce > 0) space.knobs.push_back({"reduce_lanes", IntValues({0, 1, 2}), TuneMode::kSchedule});
  space.valid = [shape](const Policy& p) {
    const int V = Host().vector_floats;
    int64_t width = IntKnob(p, "vector", 1) * V * IntKnob(p, "unroll", 1);
    if (IntKnob(p, "vector", 1) * IntKnob(p, "unroll", 1) > 1 && shape.inner < width) return false;
    int64_t rpt = IntKnob(p, "rows_per_task", 1);
    if (rpt > 1 && rpt >= shape.rows * 2) return false;
    if (IntKnob(p, "parallel", 0) && shape.rows < 2) return false;
    int64_t lanes = IntKnob(p, "reduce_lanes", 0) * V;
    if (lanes > 0 && (shape.reduce % lanes != 0)) return false;
    return true;
  };
  return space;
}

Policy RowwiseDefault(const RowShape& shape, int64_t cost_per_read) {
  int64_t rpt = 1;
  // Tasks of at least ~16K elements read, one row at the least; threads from 64K elements read (a
  // reduction's rows read `span` elements each: ReduceMax of [1024, 2048] over its last axis ran
  // on one thread, 0.30 ms, as 1024 elements).
  const int64_t row_reads = shape.inner * std::max<int64_t>(1, shape.span) * std::max<int64_t>(1, cost_per_read);
  while (rpt < 128 && rpt * 2 <= shape.rows && rpt * row_reads < 16384) rpt *= 2;
  std::vector<Knob> knobs = {{"vector", int64_t{1}}, {"unroll", int64_t{1}}, {"rows_per_task", rpt},
                             {"parallel", int64_t{shape.rows * row_reads > 65536 ? 1 : 0}}};
  // A reduction's built-in form leaves its sum to Halide's own loop: the rfactor split across vector
  // lanes (reduce_lanes 1) measured 1.7-3x slower on a 2-core Zen 4 (ReduceMax of [1024, 2048]
  // 257 -> 88 us, ReduceMean of [4096, 64] 58 -> 23 us, Softmax of [12, 256, 256] 266 -> 156 us);
  // the tuner still tries it.
  if (shape.reduce > 0) knobs.push_back({"reduce_lanes", int64_t{0}});
  return MakePolicy(knobs);
}

Var ScheduleRows(Func out, Var inner, Var row, const RowShape& shape, const Policy& p) {
  const int V = Host().vector_floats;
  const int width = static_cast<int>(IntKnob(p, "vector", 1)) * V;
  const int unroll = static_cast<int>(IntKnob(p, "unroll", 1));
  const int rpt = static_cast<int>(std::min<int64_t>(IntKnob(p, "rows_per_task", 1), shape.rows));
  Var task("task"), r_in("row_in");
  if (rpt > 1) {
    out.split(row, task, r_in, rpt, TailStrategy::GuardWithIf);
    if (IntKnob(p, "parallel", 0)) out.parallel(task);
  } else if (IntKnob(p, "parallel", 0)) {
    out.parallel(row);
  }
  if (shape.inner >= width) {
    Var vo("vo"), vi("vi");
    out.split(inner, vo, vi, width * unroll, TailStrategy::GuardWithIf).vectorize(vi, width, TailStrategy::GuardWithIf);
    if (unroll > 1) out.unroll(vi);
  } else if (shape.inner >= V) {
    out.vectorize(inner, V, TailStrategy::GuardWithIf);
  }
  return rpt > 1 ? r_in : row;
}

void ScheduleRowReduction(Func f, RVar r, Func out, Var at, const RowShape& shape, const Policy& p) {
  const int V = Host().vector_floats;
  const int lanes = static_cast<int>(IntKnob(p, "reduce_lanes", 0)) * V;
  f.compute_at(out, at);
  if (lanes > 0 && shape.reduce % lanes == 0) {
    RVar ro("ro"), ri("ri");
    Var u("lane");
    Func partial = f.update().split(r, ro, ri, lanes).rfactor(ri, u);
    partial.compute_at(out, at).vectorize(u);
    partial.update().vectorize(u);
  }
}

}  // namespace tilebank::engine
