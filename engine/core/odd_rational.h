// The odd rational fits of scripts/fit_rational.py that the elementwise kernels evaluate in place of
// libm's erf and tanh (a call per element, which no loop vectorizes): f(x) = z P(z^2) / Q(z^2) with
// z = x clamped to [-limit, limit], where f(limit) rounds to 1 in float. The Halide kernels
// (engine/backends/halide/halide_math.h) and the registry's float32 kernels share them.
#pragma once
#include <algorithm>

namespace tilebank::engine {

struct OddRationalFit {
  float limit;
  float p[7];  // P's coefficients, constant first
  float q[5];  // Q's
};

// Within 4e-8 of erf in exact arithmetic, 3e-7 evaluated in float.
inline constexpr OddRationalFit kErfFit = {3.9f,
                                           {1.128378749e+00f, 2.041965872e-01f, 5.114513636e-02f, 3.895038273e-03f, 1.474421006e-04f,
                                            -1.996754918e-06f, 2.011863920e-08f},
                                           {1.f, 5.142935514e-01f, 1.167737767e-01f, 1.472804137e-02f, 1.006291248e-03f}};
// Within 1e-10 of tanh in exact arithmetic, 3e-7 evaluated in float.
inline constexpr OddRationalFit kTanhFit = {9.f,
                                            {1.f, 1.385317445e-01f, 4.090772010e-03f, 3.292746624e-05f, 4.551150568e-08f, -3.146777283e-11f,
                                             2.543560828e-14f},
                                            {1.f, 4.718650579e-01f, 2.804579958e-02f, 4.344361369e-04f, 1.664220463e-06f}};

// The fit at x, in float (a loop of these vectorizes).
inline float EvaluateOddRational(const OddRationalFit& f, float x) {
  const float z = std::min(std::max(x, -f.limit), f.limit), t = z * z;
  float num = f.p[6], den = f.q[4];
  for (int k = 5; k >= 0; --k) num = num * t + f.p[k];
  for (int k = 3; k >= 0; --k) den = den * t + f.q[k];
  return z * num / den;
}

}  // namespace tilebank::engine
