// Elementwise float32 functions of one input, with Highway for the running CPU's best SIMD, on
// the kernels' threads: the activations and math ops a graph runs outside a fused chain (a graph
// attention's LeakyRelu over 4x500x500 scores, a GAT layer's Elu, a Softplus, a Sqrt). The
// registry's reference computes these element by element in double: 10 to 40 times slower.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace tilebank::engine {

enum class UnaryFloatKind {
  kAbs, kNeg, kExp, kLog, kSqrt, kReciprocal, kFloor, kCeil, kRound, kSign, kSin, kCos,
  kRelu, kLeakyRelu, kElu, kSelu, kCelu, kThresholdedRelu, kShrink,
  kSigmoid, kHardSigmoid, kHardSwish, kTanh, kSoftplus, kSoftsign,
  kFakeQuantize,  // clamp(round(x / alpha), beta, gamma) * alpha: a QuantizeLinear -> DequantizeLinear pair
};

// A function and its parameters: LeakyRelu's and Elu's alpha; Selu's alpha and gamma (beta);
// Celu's alpha; ThresholdedRelu's alpha; Shrink's lambd (alpha) and bias (beta); HardSigmoid's
// alpha and beta; FakeQuantize's scale (alpha) and bounds (beta, gamma: the quantized type's range
// less the zero point).
struct UnaryFloatFunction {
  UnaryFloatKind kind = UnaryFloatKind::kRelu;
  float alpha = 0, beta = 0, gamma = 0;
};

// The function of ONNX op `op_type` with its attributes read by `attr(name, default)`; nullopt for
// an op type this file does not compute.
template <class AttrFloat>
std::optional<UnaryFloatFunction> UnaryFloatFunctionOf(const std::string& op_type, const AttrFloat& attr);

// y[i] = f(x[i]) for i in [0, n); y may be x. Within 2 ULP of the float result of f's libm form for
// Exp, Log, Tanh, Softplus, Elu, Selu and Celu (Highway's math; Sin and Cos within 3 ULP, through libm
// past |x| = 39000, where Highway's range reduction ends), exact for the others but Sigmoid
// (within 1e-6 relative); FakeQuantize rounds halves to even, as QuantizeLinear.
void UnaryFloatSimd(const UnaryFloatFunction& f, const float* x, float* y, int64_t n);

template <class AttrFloat>
std::optional<UnaryFloatFunction> UnaryFloatFunctionOf(const std::string& t, const AttrFloat& attr) {
  using K = UnaryFloatKind;
  auto plain = [](K kind) { return std::optional<UnaryFloatFunction>(UnaryFloatFunction{kind, 0, 0, 0}); };
  auto with = [](K kind, float a, float b) { return std::optional<UnaryFloatFunction>(UnaryFloatFunction{kind, a, b, 0}); };
  // The functions without attributes.
  static const std::pair<const char*, K> kPlain[] = {
      {"Abs", K::kAbs},   {"Neg", K::kNeg},     {"Exp", K::kExp},   {"Log", K::kLog},         {"Sqrt", K::kSqrt},         {"Reciprocal", K::kReciprocal},
      {"Floor", K::kFloor}, {"Ceil", K::kCeil}, {"Round", K::kRound}, {"Sign", K::kSign},     {"Sin", K::kSin},           {"Cos", K::kCos},
      {"Relu", K::kRelu}, {"Sigmoid", K::kSigmoid}, {"HardSwish", K::kHardSwish}, {"Tanh", K::kTanh}, {"Softplus", K::kSoftplus}, {"Softsign", K::kSoftsign}};
  for (const auto& [name, kind] : kPlain)
    if (t == name) return plain(kind);
  if (t == "LeakyRelu") return with(K::kLeakyRelu, attr("alpha", 0.01f), 0);
  if (t == "Elu") return with(K::kElu, attr("alpha", 1.0f), 0);
  if (t == "Selu") return with(K::kSelu, attr("alpha", 1.67326319217681884765625f), attr("gamma", 1.05070102214813232421875f));
  if (t == "Celu") {  // the SIMD form takes the min before e^x - 1, which equals ONNX's for alpha > 0 only
    const float alpha = attr("alpha", 1.0f);
    return alpha > 0 ? with(K::kCelu, alpha, 0) : std::nullopt;
  }
  if (t == "ThresholdedRelu") return with(K::kThresholdedRelu, attr("alpha", 1.0f), 0);
  if (t == "Shrink") return with(K::kShrink, attr("lambd", 0.5f), attr("bias", 0.0f));
  if (t == "HardSigmoid") return with(K::kHardSigmoid, attr("alpha", 0.2f), attr("beta", 0.5f));
  return std::nullopt;
}

}  // namespace tilebank::engine
