#include "engine/backends/halide/exp_non_positive.h"

namespace tilebank::engine {

using namespace Halide;

Expr ExpNonPositive(Expr x) {
  namespace c = exp_non_positive;
  Expr clamped = max(x, c::kLowest);
  Expr k = round(clamped * c::kLog2e);
  Expr r = clamped - k * c::kLn2High;
  r = r - k * c::kLn2Low;
  Expr p = c::kTaylor[6];
  for (int i = 5; i >= 0; --i) p = p * r + c::kTaylor[i];
  Expr two_to_k = reinterpret<float>((cast<int>(k) + 127) << 23);
  return select(x < c::kLowest, 0.f, p * two_to_k);
}

}  // namespace tilebank::engine
