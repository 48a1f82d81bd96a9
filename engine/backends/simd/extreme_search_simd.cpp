// engine/backends/simd/extreme_search_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/extreme_search_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <cmath>

#include "engine/backends/simd/extreme_search_simd.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kMax, bool kLast>
void ArgExtremeRows(const float* row, int64_t dim, int64_t inner, int64_t count, int64_t* at) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(count);
  int32_t which_lanes[HWY_MAX_BYTES / sizeof(int32_t)];  // the lanes of the widest vector
  auto taken = [](float v, float best) { return (kMax ? v > best : v < best) || (kLast && v == best); };
  size_t i = 0;
  for (; i + N <= n; i += N) {
    auto best = hn::LoadU(d, row + i);
    auto which = hn::Zero(di);
    for (int64_t a = 1; a < dim; ++a) {
      const auto v = hn::LoadU(d, row + a * inner + i);
      auto take = kMax ? hn::Gt(v, best) : hn::Lt(v, best);
      if (kLast) take = hn::Or(take, hn::Eq(v, best));
      best = hn::IfThenElse(take, v, best);
      which = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, static_cast<int32_t>(a)), which);
    }
    hn::StoreU(which, di, which_lanes);
    for (size_t l = 0; l < N; ++l) at[i + l] = which_lanes[l];
  }
  for (; i < n; ++i) {
    float best = row[i];
    int64_t which = 0;
    for (int64_t a = 1; a < dim; ++a)
      if (taken(row[a * inner + i], best)) best = row[a * inner + i], which = a;
    at[i] = which;
  }
}

void ArgExtremeRowsAny(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at) {
  if (max) last ? ArgExtremeRows<true, true>(row, dim, inner, n, at) : ArgExtremeRows<true, false>(row, dim, inner, n, at);
  else last ? ArgExtremeRows<false, true>(row, dim, inner, n, at) : ArgExtremeRows<false, false>(row, dim, inner, n, at);
}

// One row: lane l keeps the extreme of row[l], row[l + N], ... and where it was; the lanes then
// meet (the extreme value, the lowest index among equals, the highest with kLast) and the tail goes
// on from there in order. A NaN in the first vector goes to the scalar walk, which keeps a NaN at
// a = 0 and never takes a later one, as a lane never takes one either.
template <bool kMax, bool kLast>
int64_t ArgExtremeRow(const float* row, int64_t dim) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto taken = [](float v, float best) { return (kMax ? v > best : v < best) || (kLast && v == best); };
  float best_value = row[0];
  int64_t best_at = 0, a = 1;
  if (dim >= 2 * N) {
    auto best = hn::LoadU(d, row);
    if (hn::AllTrue(d, hn::Eq(best, best))) {  // no NaN (Eq is false for one; Ne is ordered on some targets)
      auto which = hn::Iota(di, 0);
      auto at = hn::Iota(di, 0);
      const auto step = hn::Set(di, static_cast<int32_t>(N));
      a = N;
      for (; a + N <= dim; a += N) {
        at = hn::Add(at, step);
        const auto v = hn::LoadU(d, row + a);
        auto take = kMax ? hn::Gt(v, best) : hn::Lt(v, best);
        if (kLast) take = hn::Or(take, hn::Eq(v, best));
        best = hn::IfThenElse(take, v, best);
        which = hn::IfThenElse(hn::RebindMask(di, take), at, which);
      }
      float values[HWY_MAX_BYTES / sizeof(float)];
      int32_t indices[HWY_MAX_BYTES / sizeof(int32_t)];
      hn::StoreU(best, d, values);
      hn::StoreU(which, di, indices);
      best_value = values[0], best_at = indices[0];
      for (int64_t l = 1; l < N; ++l) {
        const bool better = kMax ? values[l] > best_value : values[l] < best_value;
        const bool tie = values[l] == best_value && (kLast ? indices[l] > best_at : indices[l] < best_at);
        if (better || tie) best_value = values[l], best_at = indices[l];
      }
    }
  }
  for (; a < dim; ++a)
    if (taken(row[a], best_value)) best_value = row[a], best_at = a;
  return best_at;
}

int64_t ArgExtremeRowAny(const float* row, int64_t dim, bool max, bool last) {
  if (max) return last ? ArgExtremeRow<true, true>(row, dim) : ArgExtremeRow<true, false>(row, dim);
  return last ? ArgExtremeRow<false, true>(row, dim) : ArgExtremeRow<false, false>(row, dim);
}

template <bool kAbove>
int64_t FirstBeyondIn(const float* v, int64_t count, float bar) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(count);
  const auto line = hn::Set(d, bar);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, v + i);
    const auto hit = hn::Or(kAbove ? hn::Gt(x, line) : hn::Lt(x, line), hn::Not(hn::Eq(x, x)));  // or NaN
    if (!hn::AllFalse(d, hit)) return static_cast<int64_t>(i) + hn::FindFirstTrue(d, hit);
  }
  for (; i < n; ++i)
    if ((kAbove ? v[i] > bar : v[i] < bar) || v[i] != v[i]) return static_cast<int64_t>(i);
  return count;
}

template <bool kLargest>
bool RankOrderIn(const float* row, size_t n, bool sorted, size_t k, int64_t* order) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  // The row padded to whole vectors with values that never go before another: -inf (+inf) at indices
  // past every real one, so a tie with them never counts.
  HWY_ALIGN float padded[kRankRowMax + HWY_MAX_BYTES / sizeof(float)];
  for (size_t j = 0; j < n; ++j) {
    if (row[j] != row[j]) return false;
    padded[j] = row[j];
  }
  const size_t whole = (n + N - 1) / N * N;
  for (size_t j = n; j < whole; ++j) padded[j] = kLargest ? -HUGE_VALF : HUGE_VALF;
  int32_t rank[kRankRowMax];
  for (size_t i = 0; i < n; ++i) {
    const auto x = hn::Set(d, padded[i]), at = hn::Set(d, static_cast<float>(i));  // exact: i < 2^24
    size_t before = 0;
    for (size_t j = 0; j < whole; j += N) {
      const auto y = hn::Load(d, padded + j);
      const auto ahead = kLargest ? hn::Gt(y, x) : hn::Lt(y, x);
      const auto tie_earlier = hn::And(hn::Eq(y, x), hn::Lt(hn::Iota(d, static_cast<float>(j)), at));
      before += hn::CountTrue(d, hn::Or(ahead, tie_earlier));
    }
    rank[i] = static_cast<int32_t>(before);
  }
  if (sorted) {
    for (size_t i = 0; i < n; ++i)
      if (static_cast<size_t>(rank[i]) < k) order[rank[i]] = static_cast<int64_t>(i);
  } else {
    size_t out = 0;
    for (size_t i = 0; i < n; ++i)
      if (static_cast<size_t>(rank[i]) < k) order[out++] = static_cast<int64_t>(i);
  }
  return true;
}

bool RankOrderAny(const float* row, int64_t dim, bool largest, bool sorted, int64_t k, int64_t* order) {
  return largest ? RankOrderIn<true>(row, static_cast<size_t>(dim), sorted, static_cast<size_t>(k), order)
                 : RankOrderIn<false>(row, static_cast<size_t>(dim), sorted, static_cast<size_t>(k), order);
}

int64_t FirstBeyondAny(const float* v, int64_t n, float bar, bool above) { return above ? FirstBeyondIn<true>(v, n, bar) : FirstBeyondIn<false>(v, n, bar); }

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(ArgExtremeRowsAny);
HWY_EXPORT(FirstBeyondAny);
HWY_EXPORT(ArgExtremeRowAny);
HWY_EXPORT(RankOrderAny);

void ArgExtremeFloatRows(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at) {
  if (n > 0 && dim > 0) HWY_DYNAMIC_DISPATCH(ArgExtremeRowsAny)(row, dim, inner, n, max, last, at);
}

int64_t ArgExtremeAlongRow(const float* row, int64_t dim, bool max, bool last) {
  return dim > 0 ? HWY_DYNAMIC_DISPATCH(ArgExtremeRowAny)(row, dim, max, last) : 0;
}

bool RankOrderRow(const float* row, int64_t dim, bool largest, bool sorted, int64_t k, int64_t* order) {
  if (dim > kRankRowMax || k < 0 || k > dim) return false;
  return dim == 0 || HWY_DYNAMIC_DISPATCH(RankOrderAny)(row, dim, largest, sorted, k, order);
}

int64_t FirstBeyond(const float* v, int64_t n, float bar, bool above) { return n > 0 ? HWY_DYNAMIC_DISPATCH(FirstBeyondAny)(v, n, bar, above) : n; }

}  // namespace tilebank::engine
#endif  // HWY_ONCE
