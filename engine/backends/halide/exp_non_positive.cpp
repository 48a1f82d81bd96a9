#include "engine/backends/halide/exp_non_positive.h"

namespace tilebank::engine {

using namespace Halide;

Expr ExpNonPositive(Expr x) {
  namespace c = exp_non_positive;
  Expr below = x < c::kLowest;
  Expr clamped = select(below, c::kLowest, x);
  Expr k = round(clamped * c::kLog2e);
  Expr r = clamped - k * c::kLn2High;
  r = r - k * c::kLn2Low;
  Expr p = c::kTaylor[6];
  for (int i = 5; i >= 0; --i) p = p * r + c::kTaylor[i];
  Expr two_to_k = reinterpret<float>((cast<int>(k) + 127) << 23);
  // Halide compiles with fast math, which may take the select above for a max() that drops a NaN;
  // is_nan is evaluated strictly, but only a NaN that x holds as a value (a load) reaches it: one
  // made by a fast-math operation in x (inf - inf) may be assumed away.
  return select(is_nan(x), x, select(below, 0.f, p * two_to_k));
}

}  // namespace tilebank::engine
