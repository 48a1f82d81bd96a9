// The order of a float32 row by a stable LSD radix sort: what TopK computes when it keeps a large
// share of a row (an argsort), in three passes over the row instead of a comparison sort's
// n log n branches. Stable, so equal values keep their index order, as TopK's ties want.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tilebank::engine::kernels {

// A float32's bits mapped so that unsigned order is the float's order (larger when !descending),
// -0 and +0 alike. The row must hold no NaN.
inline uint32_t RadixKey(float v, bool descending) {
  if (v == 0.f) v = 0.f;  // -0 equals +0: the same key, their index decides
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return descending ? ~u : u;
}

// order[0, k) = the indices of row[0, dim) sorted by value (larger first when `largest`), ties
// by the lower index. `row` holds no NaN; dim < 2^32.
inline void RadixOrder(const float* row, int64_t dim, bool largest, int64_t k, int64_t* order) {
  constexpr int kBits[3] = {11, 11, 10};
  constexpr int kShift[3] = {0, 11, 22};
  std::vector<uint32_t> keys(static_cast<size_t>(dim)), keys2(static_cast<size_t>(dim));
  std::vector<uint32_t> at(static_cast<size_t>(dim)), at2(static_cast<size_t>(dim));
  std::array<std::vector<uint32_t>, 3> counts;
  for (int p = 0; p < 3; ++p) counts[p].assign(size_t{1} << kBits[p], 0);
  for (int64_t a = 0; a < dim; ++a) {
    const uint32_t key = RadixKey(row[a], largest);
    keys[a] = key;
    at[a] = static_cast<uint32_t>(a);
    for (int p = 0; p < 3; ++p) ++counts[p][(key >> kShift[p]) & ((1u << kBits[p]) - 1)];
  }
  for (int p = 0; p < 3; ++p) {
    uint32_t sum = 0;
    bool one_bucket = false;  // every key has this digit alike: the pass moves nothing
    for (uint32_t& c : counts[p]) {
      one_bucket = one_bucket || c == static_cast<uint32_t>(dim);
      const uint32_t n = c;
      c = sum;
      sum += n;
    }
    if (one_bucket) continue;
    const uint32_t mask = (1u << kBits[p]) - 1;
    for (int64_t a = 0; a < dim; ++a) {
      const uint32_t to = counts[p][(keys[a] >> kShift[p]) & mask]++;
      keys2[to] = keys[a];
      at2[to] = at[a];
    }
    keys.swap(keys2);
    at.swap(at2);
  }
  for (int64_t j = 0; j < k; ++j) order[j] = at[j];
}

}  // namespace tilebank::engine::kernels
