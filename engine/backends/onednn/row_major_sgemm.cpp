#include "engine/backends/onednn/row_major_sgemm.h"

#include <oneapi/dnnl/dnnl.h>

#include "engine/core/threads.h"

namespace tilebank::engine {

void RowMajorSgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t ldb, float beta, float* C, int64_t ldc) {
  const SerialLibraryScope serial(M * N * K < kSerialSgemmMacs);
  dnnl_sgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace tilebank::engine
