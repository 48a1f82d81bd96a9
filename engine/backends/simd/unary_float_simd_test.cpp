#include "engine/backends/simd/unary_float_simd.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tilebank::engine {
namespace {

// Each op in double, as ONNX defines it, with the attributes the test gives it.
double Expected(const std::string& t, double x) {
  if (t == "Abs") return std::fabs(x);
  if (t == "Neg") return -x;
  if (t == "Exp") return std::exp(x);
  if (t == "Log") return std::log(x);
  if (t == "Sqrt") return std::sqrt(x);
  if (t == "Reciprocal") return 1 / x;
  if (t == "Floor") return std::floor(x);
  if (t == "Ceil") return std::ceil(x);
  if (t == "Round") return std::nearbyint(x);
  if (t == "Sign") return x > 0 ? 1 : x < 0 ? -1 : x;
  if (t == "Sin") return std::sin(x);
  if (t == "Cos") return std::cos(x);
  if (t == "Relu") return x < 0 ? 0 : x;
  if (t == "LeakyRelu") return x < 0 ? 0.3 * x : x;
  if (t == "Elu") return x < 0 ? 0.7 * std::expm1(x) : x;
  if (t == "Selu") return 1.1 * (x > 0 ? x : 1.6 * std::expm1(x));
  if (t == "Celu") return std::max(0.0, x) + std::min(0.0, 0.8 * std::expm1(x / 0.8));
  if (t == "ThresholdedRelu") return x > 0.9 ? x : 0;
  if (t == "Shrink") return x < -0.6 ? x + 0.25 : x > 0.6 ? x - 0.25 : 0;
  if (t == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (t == "HardSigmoid") return std::clamp(0.3 * x + 0.4, 0.0, 1.0);
  if (t == "HardSwish") return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
  if (t == "Tanh") return std::tanh(x);
  if (t == "Softplus") return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
  if (t == "Softsign") return x / (1 + std::fabs(x));
  return NAN;
}

float AttrOf(const std::string& t, const char* name, float fallback) {
  const std::string n = name;
  if (t == "LeakyRelu") return 0.3f;
  if (t == "Elu") return 0.7f;
  if (t == "Selu") return n == "alpha" ? 1.6f : 1.1f;
  if (t == "Celu") return 0.8f;
  if (t == "ThresholdedRelu") return 0.9f;
  if (t == "Shrink") return n == "lambd" ? 0.6f : 0.25f;
  if (t == "HardSigmoid") return n == "alpha" ? 0.3f : 0.4f;
  return fallback;
}

TEST_CASE("SIMD unary functions: each op against its double form, ragged lengths, in place, NaN and infinities") {
  const std::vector<std::string> ops = {"Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Relu", "LeakyRelu",
                                        "Elu", "Selu", "Celu", "ThresholdedRelu", "Shrink", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
                                        "Softplus", "Softsign"};
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-40.f, 40.f);
  for (const std::string& t : ops) {
    const auto f = UnaryFloatFunctionOf(t, [&](const char* name, float fallback) { return AttrOf(t, name, fallback); });
    REQUIRE(f.has_value());
    for (int64_t n : {1, 7, 16, 33, 5000, 9001}) {
      CAPTURE(t);
      CAPTURE(n);
      std::vector<float> x(n);
      for (auto& v : x) v = value(rng);
      const std::vector<float> edges = {0.f, -0.f, 0.5f, -0.5f, 2.5f, -2.5f, 1e-30f, 100.f, -100.f, inf, -inf, 38999.f, 5e5f};
      for (size_t k = 0; k < edges.size() && k < x.size(); ++k) x[k * x.size() / edges.size()] = edges[k];
      if (t == "Log" || t == "Sqrt")
        for (auto& v : x) v = v == -inf ? v : std::fabs(v);
      std::vector<float> y(n), in_place = x;
      UnaryFloatSimd(*f, x.data(), y.data(), n);
      UnaryFloatSimd(*f, in_place.data(), in_place.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        CAPTURE(x[i]);
        const double want = static_cast<float>(Expected(t, x[i]));  // past float's range: infinity
        CHECK((std::isnan(want) ? std::isnan(y[i]) : (std::isinf(want) ? y[i] == want : std::fabs(y[i] - want) <= 2e-6 * std::max(1.0, std::fabs(want)))));
        CHECK((std::isnan(y[i]) ? std::isnan(in_place[i]) : in_place[i] == y[i]));
      }
    }
    std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()}, out(1);
    UnaryFloatSimd(*f, nan.data(), out.data(), 1);
    if (t != "Relu" && t != "ThresholdedRelu" && t != "Shrink" && t != "HardSigmoid" && t != "HardSwish") CHECK(std::isnan(out[0]));
  }
  CHECK_FALSE(UnaryFloatFunctionOf("Tan", [](const char*, float v) { return v; }).has_value());
}

}  // namespace
}  // namespace tilebank::engine
