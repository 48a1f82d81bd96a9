// Compiled once per instruction set Highway targets (hwy/foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best the CPU supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/softmax_rows_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backends/simd/softmax_rows_simd.h"
#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One row. `scratch` holds `len` floats (used by kStreaming).
template <class D>
HWY_INLINE void Row(D d, const float* x, float* y, size_t len, const float* next_x, float* scratch,
                    const SoftmaxRowsOptions& options, float* reciprocal_sum) {
  const size_t N = hn::Lanes(d);
  const auto minus_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  // Pass 1: the maximum.
  auto m0 = minus_inf, m1 = minus_inf;
  size_t i = 0;
  for (; i + 2 * N <= len; i += 2 * N) m0 = hn::Max(m0, hn::LoadU(d, x + i)), m1 = hn::Max(m1, hn::LoadU(d, x + i + N));
  for (; i + N <= len; i += N) m0 = hn::Max(m0, hn::LoadU(d, x + i));
  if (i < len) m0 = hn::Max(m0, LoadTail(d, x + i, len - i, -std::numeric_limits<float>::infinity()));
  const auto max = hn::MaxOfLanes(d, hn::Max(m0, m1));
  if (options.log) {  // Pass 2: the sum of exp(x - max); pass 3: x - (max + log(sum)).
    auto s0 = hn::Zero(d);
    for (i = 0; i + N <= len; i += N) s0 = hn::Add(s0, ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), max)));
    if (i < len) s0 = hn::Add(s0, hn::IfThenElseZero(hn::FirstN(d, len - i), ExpNonPositive(d, hn::Sub(LoadTail(d, x + i, len - i, 0.f), max))));
    const auto shift = hn::Add(max, hn::Set(d, std::log(hn::GetLane(hn::SumOfLanes(d, s0)))));
    for (i = 0; i + N <= len; i += N) hn::StoreU(hn::Sub(hn::LoadU(d, x + i), shift), d, y + i);
    if (i < len) StoreTail(d, hn::Sub(LoadTail(d, x + i, len - i, 0.f), shift), y + i, len - i);
    return;
  }
  // Pass 2: exp(x - max) to the destination, summed.
  float* e = options.store == SoftmaxStore::kStreaming && !reciprocal_sum ? scratch : y;
  auto s0 = hn::Zero(d), s1 = hn::Zero(d);
  i = 0;
  for (; i + 2 * N <= len; i += 2 * N) {
    if (next_x) hwy::Prefetch(next_x + i), hwy::Prefetch(next_x + i + N);
    const auto e0 = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), max));
    const auto e1 = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i + N), max));
    hn::StoreU(e0, d, e + i), hn::StoreU(e1, d, e + i + N);
    s0 = hn::Add(s0, e0), s1 = hn::Add(s1, e1);
  }
  for (; i + N <= len; i += N) {
    const auto e0 = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), max));
    hn::StoreU(e0, d, e + i);
    s0 = hn::Add(s0, e0);
  }
  if (i < len) {  // the lanes past the row count nothing
    const auto e0 = hn::IfThenElseZero(hn::FirstN(d, len - i), ExpNonPositive(d, hn::Sub(LoadTail(d, x + i, len - i, 0.f), max)));
    StoreTail(d, e0, e + i, len - i);
    s0 = hn::Add(s0, e0);
  }
  const auto scale = hn::Div(hn::Set(d, 1.f), hn::SumOfLanes(d, hn::Add(s0, s1)));
  if (reciprocal_sum) {  // left to the caller
    *reciprocal_sum = hn::GetLane(scale);
    return;
  }
  // Pass 3: scaled, in place or streamed from the scratch row (non-temporal stores need vector
  // alignment; a misaligned row is stored normally).
  const bool stream = options.store == SoftmaxStore::kStreaming && reinterpret_cast<uintptr_t>(y) % (N * sizeof(float)) == 0;
  for (i = 0; i + N <= len; i += N) {
    const auto v = hn::Mul(hn::LoadU(d, e + i), scale);
    stream ? hn::Stream(v, d, y + i) : hn::StoreU(v, d, y + i);
  }
  if (i < len) StoreTail(d, hn::Mul(LoadTail(d, e + i, len - i, 0.f), scale), y + i, len - i);
}

void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t len, int64_t x_stride, int64_t y_stride,
                 const SoftmaxRowsOptions& options) {
  const hn::ScalableTag<float> d;
  auto scratch = options.store == SoftmaxStore::kStreaming && !options.log ? hwy::AllocateAligned<float>(len) : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const float* next = options.prefetch_next_row && r + 1 < rows ? x + (r + 1) * x_stride : nullptr;
    Row(d, x + r * x_stride, y + r * y_stride, static_cast<size_t>(len), next, scratch.get(), options,
        options.reciprocal_sums ? options.reciprocal_sums + r : nullptr);
  }
  if (options.store == SoftmaxStore::kStreaming && !options.log) hwy::FlushStream();
}

// One vector of `lanes` (at most a vector's) columns starting at x[c]: the maximum down the column,
// the sum of exp(x - max), then the output from x (log) or from the exponentials stored in y.
template <class D>
HWY_INLINE void Columns(D d, const float* x, float* y, size_t dim, size_t inner, size_t c, size_t lanes, bool log) {
  const size_t N = hn::Lanes(d);
  const float lowest = -std::numeric_limits<float>::infinity();
  auto load = [&](const float* p) { return lanes == N ? hn::LoadU(d, p) : LoadTail(d, p, lanes, lowest); };
  auto store = [&](hn::Vec<D> v, float* p) { lanes == N ? hn::StoreU(v, d, p) : StoreTail(d, v, p, lanes); };
  auto max = hn::Set(d, lowest);
  for (size_t a = 0; a < dim; ++a) max = hn::Max(max, load(x + a * inner + c));
  auto sum = hn::Zero(d);
  for (size_t a = 0; a < dim; ++a) {
    const auto e = ExpNonPositive(d, hn::Sub(load(x + a * inner + c), max));
    if (!log) store(e, y + a * inner + c);
    sum = hn::Add(sum, e);
  }
  if (log) {
    HWY_ALIGN float lane_sums[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(sum, d, lane_sums);
    for (size_t l = 0; l < N; ++l) lane_sums[l] = std::log(lane_sums[l]);
    const auto shift = hn::Add(max, hn::Load(d, lane_sums));
    for (size_t a = 0; a < dim; ++a) store(hn::Sub(load(x + a * inner + c), shift), y + a * inner + c);
    return;
  }
  const auto scale = hn::Div(hn::Set(d, 1.f), sum);
  for (size_t a = 0; a < dim; ++a) store(hn::Mul(load(y + a * inner + c), scale), y + a * inner + c);
}

void SoftmaxColumns(const float* x, float* y, int64_t dim, int64_t inner, int64_t first, int64_t count, bool log) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), end = static_cast<size_t>(first + count);
  for (size_t c = static_cast<size_t>(first); c < end; c += N)
    Columns(d, x, y, static_cast<size_t>(dim), static_cast<size_t>(inner), c, std::min(N, end - c), log);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(SoftmaxRows);
HWY_EXPORT(SoftmaxColumns);

void SoftmaxRowsSimd(const float* x, float* y, int64_t rows, int64_t len, int64_t x_stride, int64_t y_stride,
                     const SoftmaxRowsOptions& options) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRows)(x, y, rows, len, x_stride, y_stride, options);
}

void SoftmaxColumnsSimd(const float* x, float* y, int64_t dim, int64_t inner, int64_t first, int64_t count, bool log) {
  if (dim > 0 && count > 0) HWY_DYNAMIC_DISPATCH(SoftmaxColumns)(x, y, dim, inner, first, count, log);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
