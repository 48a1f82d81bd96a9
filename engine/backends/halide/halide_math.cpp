#include "engine/backends/halide/halide_math.h"

#include <stdexcept>

namespace tilebank::engine {

using namespace Halide;

namespace {

// f(x) = z P(z^2) / Q(z^2) with z = x clamped to [-limit, limit], where f(limit) rounds to 1
// in float: the odd rational fits of scripts/fit_rational.py (P of degree 6, Q of degree 4).
// The reciprocal is the CPU's estimate refined by one Newton step: a division costs more.
Expr OddRational(Expr x, float limit, const float (&p)[7], const float (&q)[5]) {
  Expr z = clamp(x, -limit, limit);
  Expr t = z * z;
  Expr num = p[6], den = q[4];
  for (int k = 5; k >= 0; --k) num = num * t + p[k];
  for (int k = 3; k >= 0; --k) den = den * t + q[k];
  Expr estimate = fast_inverse(den);
  return z * num * (estimate * (2.f - den * estimate));
}

}  // namespace

// Half the vector operations of a form with an exponential.
Expr Erf(Expr x) {
  static const float p[7] = {1.128378749e+00f, 2.041965872e-01f, 5.114513636e-02f, 3.895038273e-03f,
                             1.474421006e-04f, -1.996754918e-06f, 2.011863920e-08f};
  static const float q[5] = {1.f, 5.142935514e-01f, 1.167737767e-01f, 1.472804137e-02f, 1.006291248e-03f};
  return OddRational(x, 3.9f, p, q);
}

// Halide's own tanh calls the scalar libm function for each element: 40x slower.
Expr Tanh(Expr x) {
  static const float p[7] = {1.f, 1.385317445e-01f, 4.090772010e-03f, 3.292746624e-05f,
                             4.551150568e-08f, -3.146777283e-11f, 2.543560828e-14f};
  static const float q[5] = {1.f, 4.718650579e-01f, 2.804579958e-02f, 4.344361369e-04f, 1.664220463e-06f};
  return OddRational(x, 9.f, p, q);
}

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
