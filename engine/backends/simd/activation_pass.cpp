// engine/backends/simd/activation_pass.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/activation_pass.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>

#include "engine/backends/simd/activation_pass.h"
#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/core/parallel_for.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {

void ActivationsInPlace(const ConvEpilogue& e, float* data, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = n / N * N;
  ApplyConvEpilogueToBlockUnaligned(d, data, static_cast<size_t>(whole / N), e);
  if (whole == n) return;
  // The last part vector: its lanes past n neither read nor written.
  const size_t rest = static_cast<size_t>(n - whole);
  StoreTail(d, ApplyConvEpilogue(d, LoadTail(d, data + whole, rest, 0.f), e, nullptr), data + whole, rest);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(ActivationsInPlace);

void ApplyActivationsInPlace(const ConvEpilogue& e, float* data, int64_t n) {
  if (e.steps.empty()) return;
  // Tasks of 16 KiB at least, a multiple of every vector.
  ParallelForChunks(n, 4096, [&](int64_t first, int64_t count) { HWY_DYNAMIC_DISPATCH(ActivationsInPlace)(e, data + first, count); });
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
