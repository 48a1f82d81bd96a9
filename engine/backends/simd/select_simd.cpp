// engine/backends/simd/select_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/select_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "engine/backends/simd/select_simd.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SelectRow(const bool* c, int64_t sc, const float* x, int64_t sx, const float* z, int64_t sz, float* out, int64_t count) {
  const size_t n = static_cast<size_t>(count);
  if (sc == 0) {  // one choice for the whole row: a copy or a fill
    const float* from = c[0] ? x : z;
    const int64_t step = c[0] ? sx : sz;
    if (step == 0) std::fill(out, out + n, from[0]);
    else if (from != out) std::memmove(out, from, n * sizeof(float));
    return;
  }
  const hn::ScalableTag<float> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d);
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(c);
  const auto x_one = hn::Set(d, x[0]), z_one = hn::Set(d, z[0]);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto mask = hn::RebindMask(d, hn::Ne(hn::PromoteTo(di, hn::LoadU(d8, bytes + i)), hn::Zero(di)));
    const auto a = sx ? hn::LoadU(d, x + i) : x_one, b = sz ? hn::LoadU(d, z + i) : z_one;
    hn::StoreU(hn::IfThenElse(mask, a, b), d, out + i);
  }
  for (; i < n; ++i) out[i] = c[i] ? x[i * sx] : z[i * sz];
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(SelectRow);

void SelectFloatRow(const bool* c, int64_t sc, const float* x, int64_t sx, const float* z, int64_t sz, float* out, int64_t n) {
  if (n > 0) HWY_DYNAMIC_DISPATCH(SelectRow)(c, sc, x, sx, z, sz, out, n);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
