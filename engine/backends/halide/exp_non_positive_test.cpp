#include "engine/backends/halide/exp_non_positive.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace tilebank::engine {
namespace {

TEST_CASE("exp of non-positive values: within 1e-6 relative of std::exp, 0 below -87.3 and at -inf, NaN for NaN") {
  const int n = 20000;
  Halide::Buffer<float> in(n + 4);
  for (int i = 0; i < n; ++i) in(i) = -87.2f * i / (n - 1);  // 0 down to -87.2
  in(n) = -87.5f, in(n + 1) = -1000.f, in(n + 2) = -std::numeric_limits<float>::infinity(), in(n + 3) = std::nanf("");
  Halide::Func f;
  Halide::Var i;
  f(i) = ExpNonPositive(in(i));
  f.vectorize(i, 16, Halide::TailStrategy::GuardWithIf);
  Halide::Buffer<float> out = f.realize({n + 4});
  double worst = 0;
  for (int j = 0; j < n; ++j) worst = std::max(worst, std::fabs(out(j) - std::exp(double(in(j)))) / std::exp(double(in(j))));
  CHECK(worst < 1e-6);
  CHECK(out(0) == 1.f);
  CHECK(out(n) == 0.f);
  CHECK(out(n + 1) == 0.f);
  CHECK(out(n + 2) == 0.f);
  CHECK(std::isnan(out(n + 3)));
}

}  // namespace
}  // namespace tilebank::engine
