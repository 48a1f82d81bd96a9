#include "engine/core/broadcast.h"

#include <algorithm>

namespace tilebank::engine {

bool BroadcastShapes(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> result(rank, 1);
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& r = result[rank - s.size() + k];
      const int64_t d = s[k];
      if (d == r || d == 1) continue;
      if (r != 1) return false;
      r = d;
    }
  // A dimension of 0 broadcast with 1 stays 0.
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k] == 0) result[rank - s.size() + k] = 0;
  *out = std::move(result);
  return true;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape) {
  const auto in_strides = RowMajorStrides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t offset = out_shape.size() - in_shape.size();
  for (size_t d = offset; d < out_shape.size(); ++d)
    if (in_shape[d - offset] != 1) strides[d] = in_strides[d - offset];
  return strides;
}

void BroadcastRowOffsets(int64_t row, const std::vector<int64_t>& out_shape, const std::vector<std::vector<int64_t>>& strides, int64_t* offsets) {
  for (size_t i = 0; i < strides.size(); ++i) offsets[i] = 0;
  for (int d = static_cast<int>(out_shape.size()) - 2; d >= 0; --d) {
    const int64_t at = row % out_shape[d];
    row /= out_shape[d];
    for (size_t i = 0; i < strides.size(); ++i) offsets[i] += at * strides[i][d];
  }
}

}  // namespace tilebank::engine
