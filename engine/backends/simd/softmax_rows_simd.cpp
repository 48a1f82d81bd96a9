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

// max + log(sum of exp(x - max)) of a vector of `lanes` columns down `dim` rows, into out.
template <class D>
HWY_INLINE void LogSumExpOfColumns(D d, const float* x, size_t dim, size_t inner, size_t c, size_t lanes, float* out) {
  const size_t N = hn::Lanes(d);
  const float lowest = -std::numeric_limits<float>::infinity();
  auto load = [&](const float* p) { return lanes == N ? hn::LoadU(d, p) : LoadTail(d, p, lanes, lowest); };
  auto max = hn::Set(d, lowest), nan = hn::Zero(d);
  for (size_t a = 0; a < dim; ++a) {  // the maximum of the values that are not NaN, as the reference's std::max
    const auto v = load(x + a * inner + c);
    const auto number = hn::Eq(v, v);
    max = hn::Max(max, hn::IfThenElse(number, v, hn::Set(d, lowest)));
    nan = hn::Or(nan, hn::VecFromMask(d, hn::Not(number)));
  }
  auto sum = hn::Zero(d);
  for (size_t a = 0; a < dim; ++a) sum = hn::Add(sum, ExpNonPositive(d, hn::Sub(load(x + a * inner + c), max)));
  HWY_ALIGN float sums[HWY_MAX_BYTES / sizeof(float)], maxima[HWY_MAX_BYTES / sizeof(float)], nans[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(sum, d, sums);
  hn::Store(max, d, maxima);
  hn::Store(nan, d, nans);
  for (size_t l = 0; l < lanes; ++l)
    out[l] = std::isinf(maxima[l]) ? maxima[l] : nans[l] != 0.f ? std::numeric_limits<float>::quiet_NaN() : maxima[l] + std::log(sums[l]);
}

void LogSumExpColumns(const float* x, int64_t dim, int64_t inner, int64_t first, int64_t count, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), end = static_cast<size_t>(first + count);
  for (size_t c = static_cast<size_t>(first); c < end; c += N)
    LogSumExpOfColumns(d, x, static_cast<size_t>(dim), static_cast<size_t>(inner), c, std::min(N, end - c), out + (c - static_cast<size_t>(first)));
}

void LogSumExpRows(const float* x, int64_t rows, int64_t len, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(len);
  const float lowest = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * len;
    auto m = hn::Set(d, lowest);
    auto nan = hn::FirstN(d, 0);  // no lane
    size_t i = 0;
    auto offer = [&](hn::Vec<decltype(d)> v) {  // the maximum of the values that are not NaN, as the reference's std::max
      const auto number = hn::Eq(v, v);
      m = hn::Max(m, hn::IfThenElse(number, v, hn::Set(d, lowest)));
      nan = hn::Or(nan, hn::Not(number));
    };
    for (; i + N <= n; i += N) offer(hn::LoadU(d, row + i));
    if (i < n) offer(LoadTail(d, row + i, n - i, lowest));
    const auto max = hn::MaxOfLanes(d, m);
    const float top = hn::GetLane(max);
    if (std::isinf(top) || !hn::AllFalse(d, nan)) {  // all -inf or a +inf, else a NaN: the reference's answers
      out[r] = std::isinf(top) ? top : std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    auto s = hn::Zero(d);
    for (i = 0; i + N <= n; i += N) s = hn::Add(s, ExpNonPositive(d, hn::Sub(hn::LoadU(d, row + i), max)));
    if (i < n) s = hn::Add(s, hn::IfThenElseZero(hn::FirstN(d, n - i), ExpNonPositive(d, hn::Sub(LoadTail(d, row + i, n - i, 0.f), max))));
    out[r] = top + std::log(hn::GetLane(hn::SumOfLanes(d, s)));
  }
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
HWY_EXPORT(LogSumExpColumns);
HWY_EXPORT(LogSumExpRows);

void SoftmaxRowsSimd(const float* x, float* y, int64_t rows, int64_t len, int64_t x_stride, int64_t y_stride,
                     const SoftmaxRowsOptions& options) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRows)(x, y, rows, len, x_stride, y_stride, options);
}

void SoftmaxColumnsSimd(const float* x, float* y, int64_t dim, int64_t inner, int64_t first, int64_t count, bool log) {
  if (dim > 0 && count > 0) HWY_DYNAMIC_DISPATCH(SoftmaxColumns)(x, y, dim, inner, first, count, log);
}

void LogSumExpColumnsSimd(const float* x, int64_t dim, int64_t inner, int64_t first, int64_t count, float* out) {
  if (count > 0) HWY_DYNAMIC_DISPATCH(LogSumExpColumns)(x, dim, inner, first, count, out);
}

void LogSumExpRowsSimd(const float* x, int64_t rows, int64_t len, float* out) {
  if (rows > 0) HWY_DYNAMIC_DISPATCH(LogSumExpRows)(x, rows, len, out);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
