// Where's select over one row, with Highway for the running CPU's best SIMD: an attention mask
// (bool, often random to a branch predictor) choosing between scores and a fill.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// out[i] = c[i * sc] ? x[i * sx] : z[i * sz] for i in [0, n), each stride 0 (one value broadcast
// along the row) or 1. `out` may be x or z when that stride is 1.
void SelectFloatRow(const bool* c, int64_t sc, const float* x, int64_t sx, const float* z, int64_t sz, float* out, int64_t n);

}  // namespace tilebank::engine
