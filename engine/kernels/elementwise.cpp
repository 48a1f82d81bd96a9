#include "engine/kernels/elementwise.h"

#include <optional>

namespace tilebank::engine::kernels {

BroadcastWalk::BroadcastWalk(const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape)
    : out_(out_shape), index_(out_shape.size(), 0), offsets_(in_shapes.size(), 0) {
  const size_t rank = out_.size();
  for (const auto& s : in_shapes) {
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (size_t k = s.size(); k-- > 0;) {
      strides[rank - s.size() + k] = s[k] == 1 ? 0 : stride;
      stride *= s[k];
    }
    strides_.push_back(std::move(strides));
  }
}

BroadcastRows::BroadcastRows(const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape) {
  const size_t rank = out_shape.size(), operands = in_shapes.size();
  // has[k][d]: operand k runs along output dim d (else it broadcasts there).
  std::vector<std::vector<bool>> has(operands, std::vector<bool>(rank, false));
  std::vector<std::vector<int64_t>> strides(operands, std::vector<int64_t>(rank, 0));
  for (size_t k = 0; k < operands; ++k) {
    const auto& s = in_shapes[k];
    int64_t stride = 1;
    for (size_t j = s.size(); j-- > 0;) {
      const size_t d = rank - s.size() + j;
      has[k][d] = s[j] != 1;
      strides[k][d] = s[j] == 1 ? 0 : stride;
      stride *= s[j];
    }
  }
  // The row: trailing dims whose pattern (which operands run along them) is the last one's; dims
  // of size 1 fit any pattern.
  size_t first = rank;
  std::optional<std::vector<bool>> pattern;
  while (first > 0) {
    const size_t d = first - 1;
    if (out_shape[d] != 1) {
      std::vector<bool> p(operands);
      for (size_t k = 0; k < operands; ++k) p[k] = has[k][d];
      if (pattern && p != *pattern) break;
      pattern = p;
    }
    inner_ *= out_shape[d];
    --first;
  }
  steps_.assign(operands, 0);
  for (size_t k = 0; k < operands && pattern; ++k) steps_[k] = (*pattern)[k] ? 1 : 0;
  outer_.assign(out_shape.begin(), out_shape.begin() + first);
  for (size_t k = 0; k < operands; ++k) strides_.emplace_back(strides[k].begin(), strides[k].begin() + first);
  for (int64_t d : outer_) rows_ *= d;
  if (inner_ == 0) rows_ = 0;
}

int64_t BroadcastRows::RowStart(size_t operand, int64_t row) const {
  int64_t offset = 0;
  const auto& strides = strides_[operand];
  for (size_t d = outer_.size(); d-- > 0;) {
    offset += (row % outer_[d]) * strides[d];
    row /= outer_[d];
  }
  return offset;
}

void BroadcastWalk::Next() {
  for (size_t d = out_.size(); d-- > 0;) {
    if (++index_[d] < out_[d]) {
      for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][d];
      return;
    }
    index_[d] = 0;
    for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] -= strides_[k][d] * (out_[d] - 1);
  }
}

}  // namespace tilebank::engine::kernels
