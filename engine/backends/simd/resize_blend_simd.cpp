// engine/backends/simd/resize_blend_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/resize_blend_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <cstring>

#include "engine/backends/simd/resize_blend_simd.h"
#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// (1 - w) * a + w * b, the row-major Resize's expression (a multiply-add there may round once
// where this rounds twice: the two agree within an ulp or two).
template <class D>
HWY_INLINE void Blend(D d, const float* a, const float* b, hn::Vec<D> v, hn::Vec<D> w, float* y, int64_t n) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + N <= n; j += N) hn::StoreU(hn::Add(hn::Mul(v, hn::LoadU(d, a + j)), hn::Mul(w, hn::LoadU(d, b + j))), d, y + j);
  if (j < n) {
    const size_t rest = static_cast<size_t>(n - j);
    StoreTail(d, hn::Add(hn::Mul(v, LoadTail(d, a + j, rest, 0.f)), hn::Mul(w, LoadTail(d, b + j, rest, 0.f))), y + j, rest);
  }
}

void BlendRowsSimd(const float* a, const float* b, float w, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  Blend(d, a, b, hn::Set(d, 1.f - w), hn::Set(d, w), y, n);
}

void BlendTapRowsSimd(const float* x, int64_t width, const ResizeTap* taps, int64_t count, float* y) {
  const hn::ScalableTag<float> d;
  for (int64_t o = 0; o < count; ++o, y += width) {
    const ResizeTap& t = taps[o];
    const float* a = x + t.lo * width;
    if (t.lo == t.hi) std::memcpy(y, a, static_cast<size_t>(width) * sizeof(float));
    else Blend(d, a, x + t.hi * width, hn::Set(d, 1.f - t.w), hn::Set(d, t.w), y, width);
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(BlendRowsSimd);
HWY_EXPORT(BlendTapRowsSimd);

void BlendRows(const float* a, const float* b, float w, float* y, int64_t n) {
  if (n > 0) HWY_DYNAMIC_DISPATCH(BlendRowsSimd)(a, b, w, y, n);
}

void BlendTapRows(const float* x, int64_t width, const ResizeTap* taps, int64_t count, float* y) {
  if (count > 0 && width > 0) HWY_DYNAMIC_DISPATCH(BlendTapRowsSimd)(x, width, taps, count, y);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
