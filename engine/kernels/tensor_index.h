// Index arithmetic the kernels share: axes, strides, a walk over N-D indices, operands as int64
// or double (and back), and copying one element of any dtype.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "engine/backends/simd/extreme_search_simd.h"
#include "engine/kernels/radix_order.h"
#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

// `axis` counted from the end when negative, as an index below `rank`; nullopt when outside.
inline std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// An index counted from the end when negative; false when outside [-dim, dim).
inline bool Wrap(int64_t* i, int64_t dim) {
  if (*i < -dim || *i >= dim) return false;
  if (*i < 0) *i += dim;
  return true;
}

// Whether TopFewOfManyFloat takes k of a row of dim: over 64 (fewer: TopKOrder's one pass), at most a
// sixteenth of the row.
inline bool TakesFewOfMany(int64_t k, int64_t dim) { return k > 64 && k * 16 <= dim && dim <= INT32_MAX; }

// TopK's first k of a float32 row of many (TakesFewOfMany), in TopKOrder's order: the candidates past
// a bar gathered a vector at a time into a buffer of 4k; a full buffer keeps its best k (value, then
// index) and the k-th becomes the bar, which a later value must pass strictly (a later index loses a
// tie). order[0, k) gets them; false, with order untouched, when the row holds a NaN.
inline bool TopFewOfManyFloat(const float* row, int64_t dim, int64_t k, bool largest, bool sorted, int64_t* order) {
  std::vector<std::pair<float, int32_t>> kept;
  kept.reserve(static_cast<size_t>(4 * k));
  auto first = [largest](const std::pair<float, int32_t>& p, const std::pair<float, int32_t>& q) {
    if (p.first != q.first) return largest ? p.first > q.first : p.first < q.first;
    return p.second < q.second;
  };
  bool barred = false;  // a bar holds once k have been kept
  float bar = 0.f;
  for (int64_t a = 0; a < dim;) {
    if (barred) {
      a += FirstBeyond(row + a, dim - a, bar, largest);
      if (a == dim) break;
    }
    const float v = row[a];
    if (v != v) return false;
    kept.emplace_back(v, static_cast<int32_t>(a++));
    if (kept.size() == kept.capacity()) {
      std::nth_element(kept.begin(), kept.begin() + (k - 1), kept.end(), first);
      kept.resize(static_cast<size_t>(k));
      bar = kept[k - 1].first;  // the worst of the best k
      barred = true;
    }
  }
  const auto end = kept.begin() + std::min<int64_t>(k, static_cast<int64_t>(kept.size()));
  std::partial_sort(kept.begin(), end, kept.end(), first);
  for (int64_t j = 0; j < k; ++j) order[j] = kept[j].second;
  if (!sorted) std::sort(order, order + k);
  return true;
}

// TopK's order along one row of `dim` values: `order` (size dim) gets the indices of the first
// k, larger (smaller, when !largest) first, ties by the lower index, compared as doubles as
// value_at(a) gives them (NaN before nothing); sorted by index instead when !sorted.
// `contiguous`, when given, holds the row's values as float32 (value_at(a) == contiguous[a]): then
// values that could not enter are passed over a vector at a time.
template <class ValueAt>
void TopKOrder(int64_t k, bool largest, bool sorted, ValueAt value_at, std::vector<int64_t>* order, const float* contiguous = nullptr) {
  const int64_t dim = static_cast<int64_t>(order->size());
  if (k > 0 && k <= 64 && k * 16 <= dim) {
    // Few of many: one pass keeping the best k so far in order; a later index loses a tie. A NaN
    // (which `before` below orders with nothing) falls through to the sort.
    double kept[64];
    int64_t count = 0;
    bool nan = false;
    auto offer = [&](int64_t a) {
      const double v = value_at(a);
      if (v != v) nan = true;
      else if (count < k || (largest ? v > kept[k - 1] : v < kept[k - 1])) {
        int64_t at = count < k ? count++ : k - 1;
        for (; at > 0 && (largest ? v > kept[at - 1] : v < kept[at - 1]); --at) kept[at] = kept[at - 1], (*order)[at] = (*order)[at - 1];
        kept[at] = v;
        (*order)[at] = a;
      }
    };
    for (int64_t a = 0; a < dim && !nan;) {
      if (contiguous && count == k) {
        // The next value that could enter (or a NaN), a vector at a time.
        a += FirstBeyond(contiguous + a, dim - a, static_cast<float>(kept[k - 1]), largest);  // exact: a float32's value
        if (a == dim) break;
      }
      offer(a++);
    }
    if (!nan) {
      if (!sorted) std::sort(order->begin(), order->begin() + k);
      return;
    }
  }
  if (contiguous && TakesFewOfMany(k, dim) && TopFewOfManyFloat(contiguous, dim, k, largest, sorted, order->data())) return;
  // A short float32 row: each value's place counted against the others a vector at a time (rows
  // with a NaN go on to the sorts below).
  if (contiguous && dim <= kRankRowMax && RankOrderRow(contiguous, dim, largest, sorted, k, order->data())) return;
  if (dim >= 64) {
    // Many of many (an argsort): the (value, index) pairs, the first k by nth_element and sorted, in
    // one total order (value, then index), so the same as the heap below; rows with a NaN go on to
    // it. A float32 row sorts pairs of its floats and int32 positions (half the bytes to move).
    auto by_pairs = [&](auto key_of, auto key_tag, auto index_tag) {
      using Key = decltype(key_tag);
      using Index = decltype(index_tag);
      std::vector<std::pair<Key, Index>> pairs(static_cast<size_t>(dim));
      bool nan = false;
      for (int64_t a = 0; a < dim; ++a) {
        const Key v = key_of(a);
        nan |= v != v;
        pairs[a] = {v, static_cast<Index>(a)};
      }
      if (nan) return false;
      auto first = [largest](const std::pair<Key, Index>& p, const std::pair<Key, Index>& q) {
        if (p.first != q.first) return largest ? p.first > q.first : p.first < q.first;
        return p.second < q.second;
      };
      if (k < dim) std::nth_element(pairs.begin(), pairs.begin() + k, pairs.end(), first);
      std::sort(pairs.begin(), pairs.begin() + k, first);
      for (int64_t j = 0; j < k; ++j) (*order)[j] = pairs[j].second;
      if (!sorted) std::sort(order->begin(), order->begin() + k);
      return true;
    };
    // A float32 row kept in a large share (k at least an eighth of it: an argsort) without a NaN:
    // a radix sort's three passes.
    if (contiguous && dim <= INT32_MAX && k * 8 >= dim) {
      bool nan = false;
      for (int64_t a = 0; a < dim; ++a) nan |= contiguous[a] != contiguous[a];
      if (!nan) {
        RadixOrder(contiguous, dim, largest, k, order->data());
        if (!sorted) std::sort(order->begin(), order->begin() + k);
        return;
      }
    }
    const bool done = contiguous && dim <= INT32_MAX ? by_pairs([&](int64_t a) { return contiguous[a]; }, float{}, int32_t{})
                                                     : by_pairs(value_at, double{}, int64_t{});
    if (done) return;
  }
  std::iota(order->begin(), order->end(), 0);
  auto before = [&](int64_t p, int64_t q) {
    const double vp = value_at(p), vq = value_at(q);
    if (vp != vq) return largest ? vp > vq : vp < vq;
    return p < q;
  };
  std::partial_sort(order->begin(), order->begin() + k, order->end(), before);
  if (!sorted) std::sort(order->begin(), order->begin() + k);
}

// Row-major strides, in elements.
inline std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

// The elements of an integer (or bool) tensor as int64.
inline std::vector<int64_t> IntValues(const TypedTensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) v[i] = t.IntAt(i);
  return v;
}

// Calls f(j, index) for every element of `shape` in row-major order, index its multi-index.
template <class F>
void ForEachIndex(const std::vector<int64_t>& shape, F f) {
  const int64_t n = Tensor::NumElements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    f(j, index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// The elements of a numeric tensor as doubles, and back (converted as SetAt converts).
inline std::vector<double> AsDoubles(const TypedTensor& t) { return t.ToDoubles(); }
inline TypedTensor FromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  TypedTensor t(dtype, std::move(shape));
  t.SetFromDoubles(v);
  return t;
}

// to[j] = from[i], for tensors of one dtype.
inline void CopyElement(const TypedTensor& from, int64_t i, TypedTensor* to, int64_t j) {
  if (from.dtype == DType::kString) {
    to->strings[j] = from.strings[i];
    return;
  }
  const size_t b = ElementBytes(from.dtype);
  std::memcpy(to->bytes.data() + j * b, from.bytes.data() + i * b, b);
}

// A tensor of `dtype` and `shape` whose elements are from[index(j)].
template <class F>
TypedTensor Gathered(const TypedTensor& from, std::vector<int64_t> shape, F index) {
  TypedTensor out(from.dtype, std::move(shape));
  for (int64_t j = 0; j < out.size(); ++j) CopyElement(from, index(j), &out, j);
  return out;
}

}  // namespace tilebank::engine::kernels
