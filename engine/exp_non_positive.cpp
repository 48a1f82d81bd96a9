#include "engine/exp_non_positive.h"

namespace tilebank::engine {

using namespace Halide;

Expr ExpNonPositive(Expr x) {
  constexpr float kLowest = -87.3f;  // e^-87.3 is about the smallest normal float
  Expr clamped = max(x, kLowest);
  // x = k ln2 + r with |r| <= ln2/2; ln2 in two parts so that k ln2 is exact for |k| <= 126.
  Expr k = round(clamped * 1.44269504f);
  Expr r = clamped - k * 0.693145751953125f;
  r = r - k * 1.428606765330187e-06f;
  // Taylor series of e^r to r^6 (the next term is below 1.3e-7 of the result).
  const float coefficients[] = {1.f, 1.f, 1.f / 2, 1.f / 6, 1.f / 24, 1.f / 120, 1.f / 720};
  Expr p = coefficients[6];
  for (int i = 5; i >= 0; --i) p = p * r + coefficients[i];
  Expr two_to_k = reinterpret<float>((cast<int>(k) + 127) << 23);
  return select(x < kLowest, 0.f, p * two_to_k);
}

}  // namespace tilebank::engine
