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
  const int64_t rows = width ? count / width : 0, along = axis == last ? 0 : 1;
  std::atomic<bool> found{false};
  std::atomic<int64_t> bad{0};
  const int64_t step = strides[axis];
  ParallelFor(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, width)), [&, step, width, along, dim, wide](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end && !found.load(std::memory_order_relaxed); ++r) {
      int64_t base = 0, rest = r;
      for (int64_t k = last - 1; k >= 0; --k) {
        const int64_t c = rest % idx_shape[k];
        rest /= idx_shape[k];
        if (k != axis) base += c * strides[k];
      }
      // The row's positions, the indices in their width, read into locals: nothing the stores
      // could change is read again.
      const T* __restrict from = src + base;
      T* __restrict to = dst + r * width;
      const int64_t* idx64 = wide ? static_cast<const int64_t*>(idx) + r * width : nullptr;
      const int32_t* idx32 = wide ? nullptr : static_cast<const int32_t*>(idx) + r * width;
      for (int64_t j = 0; j < width; ++j) {
        const int64_t given = wide ? idx64[j] : idx32[j];
        const int64_t i = given < 0 ? given + dim : given;
        if (i < 0 || i >= dim) {
          if (!found.exchange(true)) bad.store(given);
          return;
        }
        to[j] = from[i * step + j * along];
      }
    }
  });
  if (found.load()) return bad.load();
  return std::nullopt;
}

}  // namespace tilebank::engine::kernels
