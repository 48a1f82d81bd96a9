// engine/backends/simd/arg_extreme_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/arg_extreme_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include "engine/backends/simd/arg_extreme_simd.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kMax, bool kLast>
void ArgExtremeRows(const float* row, int64_t dim, int64_t inner, int64_t count, int64_t* at) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(count);
  int32_t which_lanes[64];  // at least the lanes of any vector of int32
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

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(ArgExtremeRowsAny);

void ArgExtremeFloatRows(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at) {
  if (n > 0 && dim > 0) HWY_DYNAMIC_DISPATCH(ArgExtremeRowsAny)(row, dim, inner, n, max, last, at);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
