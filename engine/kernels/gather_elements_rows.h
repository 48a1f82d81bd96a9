// GatherElements (torch.gather) as its typed and float32 arena kernels both compute it: rows of the
// last dimension of the indices on the threads, each row's base offset in the data found once, then
// one index read and one element moved per position, in the element's own width.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/parallel_for.h"

namespace tilebank::engine::kernels {

// One row of `width` positions: to[j] = from[index_j * step] when the row runs along the gathered
// axis (kAlongAxis), else from[index_j * step + j] (the row runs along the data's last axis, stride
// 1), each index checked against [-dim, dim) (a negative one counted from the end). Returns false
// at the first index outside, which `*bad` then holds. Index type and kAlongAxis are template
// arguments so that the loop has no branch on them.
template <class T, class I, bool kAlongAxis>
bool GatherElementsRow(T* __restrict to, const T* __restrict from, const I* __restrict idx, int64_t width, int64_t step, int64_t dim,
                       int64_t* bad) {
  for (int64_t j = 0; j < width; ++j) {
    const int64_t given = static_cast<int64_t>(idx[j]);
    const int64_t i = given + (given < 0 ? dim : 0);
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(dim)) {
      *bad = given;
      return false;
    }
    to[j] = kAlongAxis ? from[i * step] : from[i * step + j];
  }
  return true;
}

// dst (of idx_shape) at each position: src (row-major strides `strides`, `dim` long along `axis`)
// at that position's coordinates with the index there along `axis` (int64 when `wide`, else int32;
// negative counted from the end). Returns an index outside [-dim, dim) when one is met, the output
// then undefined; nullopt otherwise.
template <class T>
std::optional<int64_t> GatherElementsRows(T* dst, const T* src, const void* idx, bool wide, const std::vector<int64_t>& idx_shape,
                                          const std::vector<int64_t>& strides, int64_t axis, int64_t dim) {
  const int64_t rank = static_cast<int64_t>(idx_shape.size()), last = rank - 1, width = idx_shape.back();
  int64_t count = 1;
  for (int64_t d : idx_shape) count *= d;
  const int64_t rows = width ? count / width : 0;
  const bool along_axis = axis == last;
  std::atomic<bool> found{false};
  std::atomic<int64_t> bad{0};
  const int64_t step = strides[axis];
  ParallelFor(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, width)), [&, step, width, along_axis, dim, wide](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end && !found.load(std::memory_order_relaxed); ++r) {
      int64_t base = 0, rest = r;
      for (int64_t k = last - 1; k >= 0; --k) {
        const int64_t c = rest % idx_shape[k];
        rest /= idx_shape[k];
        if (k != axis) base += c * strides[k];
      }
      const T* from = src + base;
      T* to = dst + r * width;
      int64_t given = 0;
      bool ok;
      if (wide) {
        const int64_t* row = static_cast<const int64_t*>(idx) + r * width;
        ok = along_axis ? GatherElementsRow<T, int64_t, true>(to, from, row, width, step, dim, &given)
                        : GatherElementsRow<T, int64_t, false>(to, from, row, width, step, dim, &given);
      } else {
        const int32_t* row = static_cast<const int32_t*>(idx) + r * width;
        ok = along_axis ? GatherElementsRow<T, int32_t, true>(to, from, row, width, step, dim, &given)
                        : GatherElementsRow<T, int32_t, false>(to, from, row, width, step, dim, &given);
      }
      if (!ok) {
        if (!found.exchange(true)) bad.store(given);
        return;
      }
    }
  });
  if (found.load()) return bad.load();
  return std::nullopt;
}

}  // namespace tilebank::engine::kernels
