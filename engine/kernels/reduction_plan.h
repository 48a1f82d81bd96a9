// Which dimensions a reduction (ReduceSum ... ReduceLogSumExp) reduces and the shapes it writes, as
// its axes, keepdims and noop_with_empty_axes say: shared by the reference and the typed kernels.
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {

struct Reduction {
  std::vector<bool> reduced;
  std::vector<int64_t> out_shape;   // with keepdims' ones
  std::vector<int64_t> kept_shape;  // the shape written (without the reduced dims unless keepdims)
};

// nullopt (with `why`) for an axis outside the rank.
inline std::optional<Reduction> PlanReduction(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool keepdims, bool noop,
                                              std::string* why) {
  Reduction r;
  const int64_t rank = static_cast<int64_t>(shape.size());
  r.reduced.assign(shape.size(), axes.empty() && !noop);
  for (int64_t a : axes) {
    auto axis = Axis(a, std::max<int64_t>(rank, 1));
    if (!axis || (rank == 0 && *axis != 0)) {
      *why = "axis " + std::to_string(a) + " outside the input's rank";
      return std::nullopt;
    }
    if (rank) r.reduced[*axis] = true;
  }
  for (int64_t k = 0; k < rank; ++k) {
    r.out_shape.push_back(r.reduced[k] ? 1 : shape[k]);
    if (!r.reduced[k] || keepdims) r.kept_shape.push_back(r.reduced[k] ? 1 : shape[k]);
  }
  return r;
}

}  // namespace tilebank::engine::kernels
