#include "engine/kernels/elementwise.h"

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
