// Elementwise ops of one input: math functions, activations, IsNaN/IsInf, Not, and Clip (whose
// bounds are optional inputs).
#include <cmath>
#include <limits>

#include "engine/backends/simd/unary_float_simd.h"
#include "engine/core/odd_rational.h"
#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

// Elements a thread takes at least: fewer than a binary op's, as most of these are a libm call.
constexpr int64_t kUnaryGrain = 4096;

// y = f(x, attrs), x in its computing type; y of x's type, or bool when `predicate`.
template <class F>
KernelFactory MapOne(F f, bool predicate) {
  return [f, predicate](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([f, predicate, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.empty() || !in[0]) return info.Bad("takes one input");
      Status status = Status::Ok();
      VisitNumeric(
          in[0]->dtype,
          [&](auto tag) {
            using T = decltype(tag);
            TypedTensor& y = (*out)[0];
            ReshapeForOverwrite(&y, predicate ? DType::kBool : in[0]->dtype, in[0]->shape);
            const T* x = in[0]->data<T>();
            // Floating types on the threads; f reads only its element and the attributes.
            ParallelFor(y.size(), kIsFloat<T> ? kUnaryGrain : std::max<int64_t>(1, y.size()), [&](int64_t begin, int64_t end) {
              for (int64_t i = begin; i < end; ++i) {
                const auto v = f(Calc<T>(x[i]), info.attrs);
                if (predicate) y.data<bool>()[i] = static_cast<bool>(v);
                else y.data<T>()[i] = Store<T>(v);
              }
            });
          },
          [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
      return status;
    });
  };
}

template <class F>
KernelFactory Unary(F f) { return MapOne(f, false); }
// y = f(x), f made once per kernel from the node's attributes by make(attrs) (read there, not per
// element: a LeakyRelu of 1M elements took 5 ms looking its alpha up each time).
template <class Make>
KernelFactory UnaryOfAttrs(Make make) {
  return [make](const KernelInfo& info) {
    auto f = make(info.attrs);
    return MapOne([f](auto x, const Attrs&) { return f(static_cast<double>(x)); }, false)(info);
  };
}
// f(x as a double, attrs) as bool.
template <class F>
KernelFactory Predicate(F f) {
  return MapOne([f](auto x, const Attrs& a) { return f(static_cast<double>(x), a); }, true);
}

// Gelu (opset 20): x * Phi(x), Phi by erf, or by tanh when approximate is "tanh".
Result<std::unique_ptr<OpKernel>> MakeGelu(const KernelInfo& info) {
  const std::string approximate = info.attrs.String("approximate", "none");
  if (approximate == "tanh")
    return Unary([](auto x, const Attrs&) {
      const double v = x;
      return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    })(info);
  if (approximate != "none") return info.Bad("approximate is '" + approximate + "', not none or tanh");
  return Unary([](auto x, const Attrs&) {
    const double v = x;
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  })(info);
}

// Clip: min and max from inputs 1 and 2 (opset 11+, either may be left out) or attributes (before).
Result<std::unique_ptr<OpKernel>> MakeClip(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.empty() || !in[0]) return info.Bad("takes an input");
    Status status = Status::Ok();
    VisitNumeric(
        in[0]->dtype,
        [&](auto tag) {
          using T = decltype(tag);
          using C = Calc<T>;
          C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
          if (info.opset < 11) {
            lo = static_cast<C>(info.attrs.Float("min", -std::numeric_limits<float>::max()));
            hi = static_cast<C>(info.attrs.Float("max", std::numeric_limits<float>::max()));
          }
          for (size_t k : {size_t{1}, size_t{2}}) {
            if (k >= in.size() || !in[k]) continue;
            if (in[k]->dtype != in[0]->dtype || in[k]->size() != 1) {
              status = info.Bad("min and max must be scalars of the input's type");
              return;
            }
            (k == 1 ? lo : hi) = static_cast<C>(in[k]->data<T>()[0]);
          }
          TypedTensor& y = (*out)[0];
          ReshapeForOverwrite(&y, in[0]->dtype, in[0]->shape);
          for (int64_t i = 0; i < y.size(); ++i) {
            const C x = static_cast<C>(in[0]->data<T>()[i]);
            y.data<T>()[i] = Store<T>(std::isnan(static_cast<double>(x)) ? x : std::min(std::max(x, lo), hi));
          }
        },
        [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
    return status;
  });
}

template <class V>
V Sign(V x) {
  if (std::isnan(static_cast<double>(x))) return x;
  return static_cast<V>(x > V(0) ? 1 : x < V(0) ? -1 : 0);
}

// float32 through an odd rational fit (engine/core/odd_rational.h): a loop that vectorizes, where
// the reference calls libm per element; on the threads.
KernelFactory Float32Fit(const OddRationalFit& fit) {
  return [&fit](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([&fit, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.empty() || !in[0] || in[0]->dtype != DType::kFloat32) return info.Bad("takes one float32 input");
      TypedTensor& y = (*out)[0];
      ReshapeForOverwrite(&y, DType::kFloat32, in[0]->shape);
      const float* x = in[0]->data<float>();
      float* to = y.data<float>();
      ParallelFor(y.size(), kUnaryGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) to[i] = EvaluateOddRational(fit, x[i]);
      });
      return Status::Ok();
    });
  };
}

// float32 at any shape on Highway (engine/backends/simd/unary_float_simd.h), as the arena's kernels
// run a static shape: a Loop's body and the shapes known only per run get the same functions.
Result<std::unique_ptr<OpKernel>> Float32Simd(const KernelInfo& info) {
  const auto f = UnaryFloatFunctionOf(info.op_type, [&](const char* name, float fallback) { return info.attrs.Float(name, fallback); });
  if (!f) return info.Bad("has no float32 SIMD form");
  return FunctionKernel([f = *f, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.empty() || !in[0] || in[0]->dtype != DType::kFloat32) return info.Bad("takes one float32 input");
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, in[0]->shape);
    UnaryFloatSimd(f, in[0]->data<float>(), y.data<float>(), y.size());
    return Status::Ok();
  });
}

}  // namespace

void RegisterUnaryKernels(KernelRegistry* r) {
  const auto& floats = FloatTypes();
  const auto& numeric = NumericTypes();
  const std::vector<DType> signed_numeric = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                                             DType::kInt8,    DType::kInt16,    DType::kInt32,   DType::kInt64};
  using A = const Attrs&;
  // Math.
  r->Add({"Abs", 6, INT_MAX, numeric, 0, Unary([](auto x, A) { return x < decltype(x)(0) ? -x : x; })});
  r->Add({"Neg", 6, INT_MAX, signed_numeric, 0, Unary([](auto x, A) { return -x; })});
  r->Add({"Sign", 9, INT_MAX, numeric, 0, Unary([](auto x, A) { return Sign(x); })});
  r->Add({"Reciprocal", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return decltype(x)(1) / x; })});
  r->Add({"Exp", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::exp(x); })});
  r->Add({"Log", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::log(x); })});
  r->Add({"Sqrt", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::sqrt(x); })});
  r->Add({"Floor", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::floor(x); })});
  r->Add({"Ceil", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::ceil(x); })});
  r->Add({"Round", 11, INT_MAX, floats, 0, Unary([](auto x, A) { return std::nearbyint(x); })});  // half to even
  r->Add({"Sin", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::sin(x); })});
  r->Add({"Cos", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::cos(x); })});
  r->Add({"Tan", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::tan(x); })});
  r->Add({"Asin", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::asin(x); })});
  r->Add({"Acos", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::acos(x); })});
  r->Add({"Atan", 7, INT_MAX, floats, 0, Unary([](auto x, A) { return std::atan(x); })});
  r->Add({"Sinh", 9, INT_MAX, floats, 0, Unary([](auto x, A) { return std::sinh(x); })});
  r->Add({"Cosh", 9, INT_MAX, floats, 0, Unary([](auto x, A) { return std::cosh(x); })});
  r->Add({"Asinh", 9, INT_MAX, floats, 0, Unary([](auto x, A) { return std::asinh(x); })});
  r->Add({"Acosh", 9, INT_MAX, floats, 0, Unary([](auto x, A) { return std::acosh(x); })});
  r->Add({"Atanh", 9, INT_MAX, floats, 0, Unary([](auto x, A) { return std::atanh(x); })});
  r->Add({"Erf", 9, INT_MAX, numeric, 0, Unary([](auto x, A) { return std::erf(static_cast<double>(x)); })});
  r->Add({"Gelu", 20, INT_MAX, floats, 0, MakeGelu});
  // Activations.
  r->Add({"Relu", 6, INT_MAX, signed_numeric, 0, Unary([](auto x, A) { return x > decltype(x)(0) ? x : decltype(x)(0); })});
  r->Add({"Sigmoid", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); })});
  r->Add({"Tanh", 6, INT_MAX, floats, 0, Unary([](auto x, A) { return std::tanh(x); })});
  r->Add({"Erf", 9, INT_MAX, {DType::kFloat32}, 0, Float32Fit(kErfFit), false, "float32"});
  r->Add({"Softplus", 1, INT_MAX, floats, 0, Unary([](auto x, A) { return std::log1p(std::exp(x)); })});
  r->Add({"Softsign", 1, INT_MAX, floats, 0, Unary([](auto x, A) { return x / (decltype(x)(1) + (x < decltype(x)(0) ? -x : x)); })});
  r->Add({"HardSigmoid", 6, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 0.2f), beta = a.Float("beta", 0.5f);
            return [=](double v) { return std::clamp(alpha * v + beta, 0.0, 1.0); };
          })});
  r->Add({"HardSwish", 14, INT_MAX, floats, 0, Unary([](auto x, A) {
            const double v = static_cast<double>(x);
            return v * std::clamp(v / 6 + 0.5, 0.0, 1.0);
          })});
  r->Add({"Elu", 6, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 1.f);
            return [=](double v) { return v >= 0 ? v : alpha * std::expm1(v); };
          })});
  r->Add({"Celu", 12, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 1.f);
            return [=](double v) { return std::max(0.0, v) + std::min(0.0, alpha * std::expm1(v / alpha)); };
          })});
  r->Add({"Selu", 6, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 1.67326319217681884765625f), gamma = a.Float("gamma", 1.05070102214813232421875f);
            return [=](double v) { return gamma * (v > 0 ? v : alpha * std::expm1(v)); };
          })});
  r->Add({"LeakyRelu", 6, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 0.01f);
            return [=](double v) { return v >= 0 ? v : alpha * v; };
          })});
  r->Add({"ThresholdedRelu", 10, INT_MAX, floats, 0, UnaryOfAttrs([](A a) {
            const double alpha = a.Float("alpha", 1.f);
            return [=](double v) { return v > alpha ? v : 0.0; };
          })});
  r->Add({"Shrink", 9, INT_MAX, numeric, 0, UnaryOfAttrs([](A a) {
            const double lambd = a.Float("lambd", 0.5f), bias = a.Float("bias", 0.f);
            return [=](double v) { return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0; };
          })});
  r->Add({"Clip", 6, INT_MAX, numeric, 0, MakeClip});
  // float32 on Highway at any shape ("simd"; the arena's "float32", registered later, takes the
  // static shapes), after each op's reference, from the first opset the reference takes.
  for (const auto& [op, since] : std::vector<std::pair<const char*, int>>{
           {"Abs", 6}, {"Neg", 6}, {"Sign", 9}, {"Reciprocal", 6}, {"Exp", 6}, {"Log", 6}, {"Sqrt", 6}, {"Floor", 6}, {"Ceil", 6}, {"Round", 11},
           {"Sin", 7}, {"Cos", 7}, {"Relu", 6}, {"Sigmoid", 6}, {"Tanh", 6}, {"Softplus", 1}, {"Softsign", 1}, {"HardSigmoid", 6},
           {"HardSwish", 14}, {"Elu", 6}, {"Celu", 12}, {"Selu", 6}, {"LeakyRelu", 6}, {"ThresholdedRelu", 10}, {"Shrink", 9}})
    r->Add({op, since, INT_MAX, {DType::kFloat32}, 0, Float32Simd, false, "simd"});
  // Predicates.
  r->Add({"IsNaN", 9, INT_MAX, floats, 0, Predicate([](double x, A) { return std::isnan(x); })});
  r->Add({"IsInf", 10, INT_MAX, floats, 0, Predicate([](double x, A a) {
            return std::isinf(x) && ((x > 0 && a.Int("detect_positive", 1)) || (x < 0 && a.Int("detect_negative", 1)));
          })});
  r->Add({"Not", 1, INT_MAX, {DType::kBool}, 0, Unary([](auto x, A) { return !x; })});
}

}  // namespace tilebank::engine::kernels
