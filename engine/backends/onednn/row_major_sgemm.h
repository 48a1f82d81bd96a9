// oneDNN's sgemm (row-major C = alpha op(A) op(B) + beta C) on the threads the size pays for.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// Below this many multiply-adds a product runs on the calling thread. Measured with dnnl_sgemm on a
// 2-core Zen 5, one thread against two, medians of 400 calls: [1,256]x[256,256] 2.9 against 5.7 us,
// [2,256]x[256,256] 2.4 against 6.6, [64,64]x[64,64] 4.8 against 8.0; from [1,512]x[512,512] (262 K)
// the second thread gains (13.3 against 9.9 us).
inline constexpr int64_t kSerialSgemmMacs = int64_t{1} << 18;

// dnnl_sgemm's arguments (transa, transb 'N' or 'T'; leading dimensions of the row-major matrices).
void RowMajorSgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace tilebank::engine
