// Compiled once per instruction set Highway targets (hwy/foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best the CPU supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/matrix_vector_rows.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include "engine/backends/simd/matrix_vector_rows.h"
#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void Rows(const float* HWY_RESTRICT a, int64_t M, int64_t K, const float* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  const hn::CappedTag<float, 8> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), whole = K / N * N;
  for (int64_t m = 0; m < M; ++m) {
    const float* row = a + m * K;
    auto sum = hn::Zero(d);
    for (int64_t k = 0; k < whole; k += N) sum = hn::MulAdd(hn::LoadU(d, row + k), hn::LoadU(d, x + k), sum);
    if (whole < K) {
      const size_t tail = static_cast<size_t>(K - whole);
      sum = hn::MulAdd(LoadTail(d, row + whole, tail, 0.f), LoadTail(d, x + whole, tail, 0.f), sum);
    }
    y[m] = hn::GetLane(hn::SumOfLanes(d, sum));
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(Rows);

void MatrixVectorRows(const float* a, int64_t M, int64_t K, const float* x, float* y) { HWY_DYNAMIC_DISPATCH(Rows)(a, M, K, x, y); }

}  // namespace tilebank::engine
#endif  // HWY_ONCE
