// SiLU (x * Sigmoid(x)) in float, as loops vectorize it: exp on the constants of
// engine/backends/simd/exp_non_positive_constants.h (relative error below 1e-6), written so that every
// instruction set's compiler vectorizes a loop of it (no call, no NaN converted to an integer). The
// norm kernels apply it after normalizing, row-major (engine/kernels/float32_norm_kernels.cpp) and in
// a layout family (engine/backends/onednn/group_norm_in_family.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/backends/simd/exp_non_positive_constants.h"

namespace tilebank::engine {

// exp(x) for x <= 0 (0 below exp_non_positive::kLowest).
inline float ExpNonPositiveFloat(float x) {
  namespace c = exp_non_positive;
  const float clamped = x >= c::kLowest ? x : c::kLowest;  // NaN too: no conversion of NaN to an integer
  // k = round(clamped log2 e), for a value <= 0 by truncating its negation: a conversion every
  // instruction set vectorizes, where nearbyint is a call without SSE4.1.
  const int32_t ki = -static_cast<int32_t>(0.5f - clamped * c::kLog2e);
  const float k = static_cast<float>(ki);
  const float r = (clamped - k * c::kLn2High) - k * c::kLn2Low;
  float p = c::kTaylor[6];
  for (int i = 5; i >= 0; --i) p = p * r + c::kTaylor[i];
  const int32_t bits = (ki + 127) << 23;
  float two_to_k;
  std::memcpy(&two_to_k, &bits, sizeof two_to_k);
  return x < c::kLowest ? 0.0f : p * two_to_k;
}

// v Sigmoid(v), with the exponential of -|v| only.
inline float SwishFloat(float v) {
  const float e = ExpNonPositiveFloat(-std::fabs(v)), sigmoid = (v >= 0 ? 1.0f : e) / (1.0f + e);
  return v * sigmoid;
}

// Before a loop whose output may be its input, element for element.
#if defined(__clang__)
#define TB_VECTORIZE_IN_PLACE _Pragma("clang loop vectorize(assume_safety)")
#else
#define TB_VECTORIZE_IN_PLACE _Pragma("GCC ivdep")
#endif

}  // namespace tilebank::engine
