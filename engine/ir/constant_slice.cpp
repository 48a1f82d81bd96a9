#include "engine/ir/constant_slice.h"

#include <algorithm>

namespace tilebank::engine::model {

std::optional<std::vector<int64_t>> ConstantSliceStarts(const Graph& g, const Node& n, const std::vector<int64_t>& in_shape) {
  if (n.op_type != "Slice" || n.inputs.size() < 3 || !g.IsConstant(n.inputs[1])) return std::nullopt;
  auto given = [&](size_t slot) { return slot < n.inputs.size() && n.inputs[slot] >= 0; };
  for (size_t slot : {size_t{3}, size_t{4}})
    if (given(slot) && !g.IsConstant(n.inputs[slot])) return std::nullopt;
  const ConstTensor& starts = *g.values[n.inputs[1]].constant;
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> at(in_shape.size(), 0);
  for (int64_t k = 0; k < starts.size(); ++k) {
    if (given(4) && g.values[n.inputs[4]].constant->IntAt(k) != 1) return std::nullopt;
    int64_t axis = given(3) ? g.values[n.inputs[3]].constant->IntAt(k) : k;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const int64_t dim = in_shape[static_cast<size_t>(axis)], start = starts.IntAt(k);
    at[static_cast<size_t>(axis)] = std::clamp<int64_t>(start < 0 ? start + dim : start, 0, dim);
  }
  return at;
}

}  // namespace tilebank::engine::model
