#include "engine/backends/halide/halide_math.h"

#include <stdexcept>

#include "engine/core/odd_rational.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

// An odd rational fit (engine/core/odd_rational.h) as an expression. The reciprocal is the CPU's
// estimate refined by one Newton step: a division costs more.
Expr OddRational(Expr x, const OddRationalFit& f) {
  Expr z = clamp(x, -f.limit, f.limit);
  Expr t = z * z;
  Expr num = f.p[6], den = f.q[4];
  for (int k = 5; k >= 0; --k) num = num * t + f.p[k];
  for (int k = 3; k >= 0; --k) den = den * t + f.q[k];
  Expr estimate = fast_inverse(den);
  return z * num * (estimate * (2.f - den * estimate));
}

}  // namespace

// Half the vector operations of a form with an exponential.
Expr Erf(Expr x) { return OddRational(x, kErfFit); }

// Halide's own tanh calls the scalar libm function for each element: 40x slower.
Expr Tanh(Expr x) { return OddRational(x, kTanhFit); }

Expr Activation(const std::string& t, Expr x, float alpha, float beta) {
  if (t == "Relu") return max(x, 0.f);
  if (t == "LeakyRelu") return select(x > 0.f, x, alpha * x);
  if (t == "Clip") return min(max(x, alpha), beta);
  if (t == "Sigmoid") return 1.f / (1.f + exp(-x));
  if (t == "Tanh") return Tanh(x);
  if (t == "Erf") return Erf(x);
  if (t == "HardSigmoid") return clamp(alpha * x + beta, 0.f, 1.f);
  if (t == "HardSwish") return x * clamp(x / 6.f + 0.5f, 0.f, 1.f);
  if (t == "Swish") return x / (1.f + exp(-x));
  if (t == "Gelu") return 0.5f * x * (1.f + Erf(x * 0.70710678f));
  if (t == "GeluTanh") return 0.5f * x * (1.f + Tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
  throw std::invalid_argument("no Halide activation for " + t);
}

}  // namespace tilebank::engine
