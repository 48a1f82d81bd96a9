// The schedule shared by the vector templates: the output is rows (all outer dimensions fused)
// of a contiguous inner dimension; rows are split into parallel tasks, the inner dimension is
// vectorized and unrolled, and reductions along a row are vectorized with rfactor.
// Knobs (Schedule): vector (width in vector registers), unroll, rows_per_task, parallel, and for
// templates with a row reduction reduce_lanes (0: scalar reduction; otherwise lanes = vector width).
#pragma once
#include <Halide.h>

#include "engine/core/search_space.h"

namespace tilebank::engine {

struct RowShape {
  int64_t inner = 1;  // elements per row (vectorized)
  int64_t rows = 1;   // product of the outer dimensions
  int64_t reduce = 0; // length of a row reduction (0: none)
  int64_t span = 1;   // input elements each output element reads (a reduction's length, across rows too)
};

SearchSpace RowwiseSpace(const RowShape& shape);
// The built-in policy; `cost_per_read`: an element's work in loads (an exp or a tanh's about 4), so
// that costly ops take their threads and tasks at fewer elements.
Policy RowwiseDefault(const RowShape& shape, int64_t cost_per_read = 1);

// Schedules `out` (pure, dims (inner, rows)) and returns the row loop var, at which per-row stages
// can be computed. `out` must already be bounded.
Halide::Var ScheduleRows(Halide::Func out, Halide::Var inner, Halide::Var row, const RowShape& shape, const Policy& policy);

// Vectorizes the reduction update of `f` (a per-row stage, pure vars `pure`, reduction `r` over
// the row) when the policy asks for lanes and they divide the row; computes `f` at `at` in `out`.
void ScheduleRowReduction(Halide::Func f, Halide::RVar r, Halide::Func out, Halide::Var at, const RowShape& shape,
                          const Policy& policy);

}  // namespace tilebank::engine
