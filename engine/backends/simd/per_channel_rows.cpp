// engine/backends/simd/per_channel_rows.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/per_channel_rows.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include "engine/backends/simd/per_channel_rows.h"
#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <PerChannelMap kMap, class D>
HWY_INLINE hn::Vec<D> Apply(D d, hn::Vec<D> x, const float* a, const float* b) {
  const auto va = hn::LoadU(d, a);
  if constexpr (kMap == PerChannelMap::kAdd) return hn::Add(x, va);
  if constexpr (kMap == PerChannelMap::kSub) return hn::Sub(x, va);
  if constexpr (kMap == PerChannelMap::kMul) return hn::Mul(x, va);
  if constexpr (kMap == PerChannelMap::kDiv) return hn::Div(x, va);
  if constexpr (kMap == PerChannelMap::kAffine) return hn::MulAdd(x, va, hn::LoadU(d, b));
  if constexpr (kMap == PerChannelMap::kAffineRelu) return hn::Max(hn::MulAdd(x, va, hn::LoadU(d, b)), hn::Zero(d));
}

// The lanes past `valid` of a partial vector are computed from zeros and not stored (a Div's by 1).
template <PerChannelMap kMap>
void Rows(const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = valid / N * N;
  const size_t rest = static_cast<size_t>(valid - whole);
  // The tail's channel values, zero-padded once (a and b hold `valid` values only).
  HWY_ALIGN float tail_a[HWY_MAX_BYTES / sizeof(float)] = {}, tail_b[HWY_MAX_BYTES / sizeof(float)] = {};
  for (int64_t j = whole; j < valid; ++j) tail_a[j - whole] = a[j], tail_b[j - whole] = b[j];
  if constexpr (kMap == PerChannelMap::kDiv)
    for (int64_t j = valid - whole; j < N; ++j) tail_a[j] = 1.f;
  for (int64_t r = 0; r < rows; ++r, x += width, y += width) {
    int64_t j = 0;
    for (; j < whole; j += N) hn::StoreU(Apply<kMap>(d, hn::LoadU(d, x + j), a + j, b + j), d, y + j);
    if (j < valid) StoreTail(d, Apply<kMap>(d, LoadTail(d, x + j, rest, 0.f), tail_a, tail_b), y + j, rest);
    for (int64_t k = valid; k < width; ++k) y[k] = 0.f;
  }
}

void MapRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a, const float* b) {
  switch (map) {
    case PerChannelMap::kAdd: return Rows<PerChannelMap::kAdd>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kSub: return Rows<PerChannelMap::kSub>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kMul: return Rows<PerChannelMap::kMul>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kDiv: return Rows<PerChannelMap::kDiv>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kAffine: return Rows<PerChannelMap::kAffine>(x, y, rows, width, valid, a, b);
    case PerChannelMap::kAffineRelu: return Rows<PerChannelMap::kAffineRelu>(x, y, rows, width, valid, a, b);
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(MapRows);

void MapPerChannelRows(PerChannelMap map, const float* x, float* y, int64_t rows, int64_t width, int64_t valid, const float* a,
                       const float* b) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(MapRows)(map, x, y, rows, width, valid, a, b ? b : a);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
