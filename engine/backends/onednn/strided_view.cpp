#include "engine/backends/onednn/strided_view.h"

#include <algorithm>

namespace tilebank::engine {

StridedView RowMajorView(const std::vector<int64_t>& shape) {
  StridedView v;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) v.strides[d] = v.strides[d + 1] * shape[d + 1];
  return v;
}

namespace {

bool IsPermutation(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

}  // namespace

std::optional<StridedView> TransposeView(const StridedView& v, const std::vector<int64_t>& perm) {
  if (!IsPermutation(perm, v.shape.size())) return std::nullopt;
  StridedView t = v;
  for (size_t d = 0; d < perm.size(); ++d) {
    t.shape[d] = v.shape[perm[d]];
    t.strides[d] = v.strides[perm[d]];
  }
  return t;
}

std::optional<StridedView> UntransposeView(const StridedView& v, const std::vector<int64_t>& perm) {
  if (!IsPermutation(perm, v.shape.size())) return std::nullopt;
  StridedView t = v;
  for (size_t d = 0; d < perm.size(); ++d) {
    t.shape[perm[d]] = v.shape[d];
    t.strides[perm[d]] = v.strides[d];
  }
  return t;
}

std::optional<StridedView> SliceView(const StridedView& v, int64_t axis, int64_t start, int64_t extent) {
  if (axis < 0 || axis >= static_cast<int64_t>(v.shape.size()) || start < 0 || extent < 0 || start + extent > v.shape[axis]) return std::nullopt;
  StridedView s = v;
  s.offset += start * v.strides[axis];
  s.shape[axis] = extent;
  return s;
}

std::optional<StridedView> ReshapeView(const StridedView& v, const std::vector<int64_t>& shape) {
  int64_t count = 1, new_count = 1;
  for (int64_t d : v.shape) count *= d;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    new_count *= d;
  }
  if (count != new_count) return std::nullopt;
  StridedView r;
  r.shape = shape;
  r.offset = v.offset;
  r.strides.assign(shape.size(), 0);
  // Dimensions of extent 1 take no part: drop them from the old view.
  std::vector<int64_t> old_shape, old_strides;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1) old_shape.push_back(v.shape[d]), old_strides.push_back(v.strides[d]);
  size_t oi = 0, ni = 0;
  while (oi < old_shape.size() && ni < shape.size()) {
    if (shape[ni] == 1) {
      r.strides[ni++] = 0;
      continue;
    }
    // Smallest groups old[oi, oj) and new[ni, nj) of equal product.
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = old_shape[oi], np = shape[ni];
    while (op != np) {
      if (op < np) {
        if (oj >= old_shape.size()) return std::nullopt;
        op *= old_shape[oj++];
      } else {
        if (nj >= shape.size()) return std::nullopt;
        np *= shape[nj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (old_strides[k] != old_strides[k + 1] * old_shape[k + 1]) return std::nullopt;  // not contiguous across the group
    int64_t stride = old_strides[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      r.strides[k] = stride;
      stride *= shape[k];
    }
    oi = oj;
    ni = nj;
  }
  for (; ni < shape.size(); ++ni) r.strides[ni] = 0;  // trailing extent-1 dimensions
  return r;
}

}  // namespace tilebank::engine
