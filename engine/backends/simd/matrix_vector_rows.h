// y[m] = sum_k a[m][k] x[k]: one small matrix by a vector (a capsule transform of 16 x 8 by a pose of
// 8), the rows' sums taken a vector of k at a time and added across lanes. Hand-written with Highway
// for the running CPU's best SIMD (chosen at run time), vectors of at most 8 floats: the products
// this serves are many and small, their K a few vectors at most.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// `a` [M][K] row-major, `x` [K], `y` [M]; y must not overlap a or x. Thread-safe.
void MatrixVectorRows(const float* a, int64_t M, int64_t K, const float* x, float* y);

}  // namespace tilebank::engine
