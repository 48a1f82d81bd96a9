// engine/backends/simd/extreme_search_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/extreme_search_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

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

template <bool kAbove>
int64_t FirstBeyondIn(const float* v, int64_t count, float bar) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(count);
  const auto line = hn::Set(d, bar);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, v + i);
    const auto hit = hn::Or(kAbove ? hn::Gt(x, line) : hn::Lt(x, line), hn::Ne(x, x));
    if (!hn::AllFalse(d, hit)) return static_cast<int64_t>(i) + hn::FindFirstTrue(d, hit);
  }
  for (; i < n; ++i)
    if ((kAbove ? v[i] > bar : v[i] < bar) || v[i] != v[i]) return static_cast<int64_t>(i);
  return count;
}

int64_t FirstBeyondAny(const float* v, int64_t n, float bar, bool above) { return above ? FirstBeyondIn<true>(v, n, bar) : FirstBeyondIn<false>(v, n, bar); }

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(ArgExtremeRowsAny);
HWY_EXPORT(FirstBeyondAny);

void ArgExtremeFloatRows(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at) {
  if (n > 0 && dim > 0) HWY_DYNAMIC_DISPATCH(ArgExtremeRowsAny)(row, dim, inner, n, max, last, at);
}

int64_t FirstBeyond(const float* v, int64_t n, float bar, bool above) { return n > 0 ? HWY_DYNAMIC_DISPATCH(FirstBeyondAny)(v, n, bar, above) : n; }

}  // namespace tilebank::engine
#endif  // HWY_ONCE
