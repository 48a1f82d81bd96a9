// engine/backends/simd/unary_float_simd.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/unary_float_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backends/simd/unary_float_simd.h"
#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/vector_math-inl.h"
#include "engine/core/parallel_for.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {

// y = f(x) over n floats (y may be x): whole vectors four at a time (a long function's latency overlaps), then
// single vectors, then the partial last one through a buffer.
template <class D, class F>
HWY_INLINE void MapFloats(D d, const float* x, float* y, size_t n, const F& f) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto a = f(hn::LoadU(d, x + i)), b = f(hn::LoadU(d, x + i + N));
    const auto c = f(hn::LoadU(d, x + i + 2 * N)), e = f(hn::LoadU(d, x + i + 3 * N));
    hn::StoreU(a, d, y + i), hn::StoreU(b, d, y + i + N), hn::StoreU(c, d, y + i + 2 * N), hn::StoreU(e, d, y + i + 3 * N);
  }
  for (; i + N <= n; i += N) hn::StoreU(f(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) StoreTail(d, f(LoadTail(d, x + i, n - i, 0.f)), y + i, n - i);
}

// NaN lanes of x pass through: Highway's math functions are defined on numbers only.
template <class D>
HWY_INLINE hn::Vec<D> KeepNaN(hn::Vec<D> x, hn::Vec<D> y) { return hn::IfThenElse(hn::IsNaN(x), x, y); }

// exp(x) for every float: inf above the largest finite result, 0 far below.
template <class D>
HWY_INLINE hn::Vec<D> ExpAll(D d, hn::Vec<D> x) {
  const auto top = hn::Set(d, 88.72283935546875f);
  return hn::IfThenElse(hn::Gt(x, top), hn::Set(d, std::numeric_limits<float>::infinity()), hn::Exp(d, hn::Min(x, top)));
}

// expm1(x) for x <= 0 (the negative side of Elu, Selu and Celu); positive lanes get expm1(0).
template <class D>
HWY_INLINE hn::Vec<D> Expm1NonPositive(D d, hn::Vec<D> x) { return hn::Expm1(d, hn::Min(x, hn::Zero(d))); }

// sin(x) or cos(x): Highway's within |x| <= 39000, libm's for a vector with a lane past it (or NaN).
template <bool kSine, class D>
HWY_INLINE hn::Vec<D> SineOrCosine(D d, hn::Vec<D> x) {
  if (hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, 39000.f)))) return kSine ? hn::Sin(d, x) : hn::Cos(d, x);
  HWY_ALIGN float lanes[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(x, d, lanes);
  for (size_t k = 0; k < hn::Lanes(d); ++k) lanes[k] = kSine ? std::sin(lanes[k]) : std::cos(lanes[k]);
  return hn::Load(d, lanes);
}

void UnaryFloatRange(const UnaryFloatFunction& fn, const float* x, float* y, int64_t count) {
  using K = UnaryFloatKind;
  const hn::ScalableTag<float> d;
  const size_t n = static_cast<size_t>(count);
  const auto zero = hn::Zero(d), one = hn::Set(d, 1.f), alpha = hn::Set(d, fn.alpha), beta = hn::Set(d, fn.beta);
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity()), nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  auto map = [&](const auto& f) HWY_ATTR { MapFloats(d, x, y, n, f); };
  // A function the convolutions' epilogue also applies: its formula (conv_epilogue-inl.h).
  auto epilogue = [&](ConvEpilogueStep::Kind kind) HWY_ATTR {
    const ConvEpilogueStep step{kind, fn.alpha, fn.beta};
    map([&](auto v) HWY_ATTR { return ApplyConvEpilogueStep(d, v, step, nullptr); });
  };
  switch (fn.kind) {
    case K::kAbs: return map([&](auto v) HWY_ATTR { return hn::Abs(v); });
    case K::kNeg: return map([&](auto v) HWY_ATTR { return hn::Neg(v); });
    case K::kExp: return map([&](auto v) HWY_ATTR { return KeepNaN<decltype(d)>(v, ExpAll(d, v)); });
    case K::kLog:
      return map([&](auto v) HWY_ATTR {
        auto r = hn::Log(d, hn::Max(v, hn::Set(d, std::numeric_limits<float>::denorm_min())));
        r = hn::IfThenElse(hn::Eq(v, zero), hn::Neg(inf), hn::IfThenElse(hn::Eq(v, inf), inf, r));
        return hn::IfThenElse(hn::Or(hn::Lt(v, zero), hn::IsNaN(v)), nan, r);
      });
    case K::kSqrt: return map([&](auto v) HWY_ATTR { return hn::Sqrt(v); });
    case K::kReciprocal: return map([&](auto v) HWY_ATTR { return hn::Div(one, v); });
    case K::kFloor: return map([&](auto v) HWY_ATTR { return hn::Floor(v); });
    case K::kCeil: return map([&](auto v) HWY_ATTR { return hn::Ceil(v); });
    case K::kRound: return map([&](auto v) HWY_ATTR { return hn::Round(v); });  // halves to even, as ONNX
    case K::kSign:
      return map([&](auto v) HWY_ATTR { return hn::IfThenElse(hn::Gt(v, zero), one, hn::IfThenElse(hn::Lt(v, zero), hn::Neg(one), v)); });
    case K::kSin: return map([&](auto v) HWY_ATTR { return SineOrCosine<true>(d, v); });
    case K::kCos: return map([&](auto v) HWY_ATTR { return SineOrCosine<false>(d, v); });
    case K::kRelu: return map([&](auto v) HWY_ATTR { return hn::IfThenZeroElse(hn::Lt(v, zero), v); });
    case K::kLeakyRelu: return epilogue(ConvEpilogueStep::Kind::kLeakyRelu);
    case K::kElu:
      return map([&](auto v) HWY_ATTR { return KeepNaN<decltype(d)>(v, hn::IfThenElse(hn::Lt(v, zero), hn::Mul(alpha, Expm1NonPositive(d, v)), v)); });
    case K::kSelu:  // gamma (beta) * (x > 0 ? x : alpha (e^x - 1))
      return map([&](auto v) HWY_ATTR {
        return KeepNaN<decltype(d)>(v, hn::Mul(beta, hn::IfThenElse(hn::Gt(v, zero), v, hn::Mul(alpha, Expm1NonPositive(d, v)))));
      });
    case K::kCelu:  // max(0, x) + min(0, alpha (e^(x / alpha) - 1))
      return map([&](auto v) HWY_ATTR {
        return KeepNaN<decltype(d)>(v, hn::Add(hn::Max(v, zero), hn::Mul(alpha, Expm1NonPositive(d, hn::Div(v, alpha)))));
      });
    case K::kThresholdedRelu: return map([&](auto v) HWY_ATTR { return hn::IfThenElseZero(hn::Gt(v, alpha), v); });
    case K::kShrink:  // lambd (alpha), bias (beta)
      return map([&](auto v) HWY_ATTR {
        return hn::IfThenElse(hn::Lt(v, hn::Neg(alpha)), hn::Add(v, beta), hn::IfThenElseZero(hn::Gt(v, alpha), hn::Sub(v, beta)));
      });
    case K::kSigmoid: return epilogue(ConvEpilogueStep::Kind::kSigmoid);
    case K::kHardSigmoid: return map([&](auto v) HWY_ATTR { return KeepNaN<decltype(d)>(v, hn::Min(hn::Max(hn::MulAdd(alpha, v, beta), zero), one)); });
    case K::kHardSwish: return epilogue(ConvEpilogueStep::Kind::kHardSwish);
    case K::kTanh: return epilogue(ConvEpilogueStep::Kind::kTanh);
    case K::kSoftplus:  // max(x, 0) + log1p(e^-|x|): no overflow
      return map([&](auto v) HWY_ATTR {
        return KeepNaN<decltype(d)>(v, hn::Add(hn::Max(v, zero), hn::Log1p(d, ExpNonPositive(d, hn::Neg(hn::Abs(v))))));
      });
    case K::kSoftsign: return map([&](auto v) HWY_ATTR { return hn::Div(v, hn::Add(one, hn::Abs(v))); });
    case K::kFakeQuantize: {  // the quotient by division, as QuantizeLinear computes it
      const auto hi = hn::Set(d, fn.gamma);
      return map([&](auto v) HWY_ATTR { return hn::Mul(hn::Min(hn::Max(hn::Round(hn::Div(v, alpha)), beta), hi), alpha); });
    }
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(UnaryFloatRange);

void UnaryFloatSimd(const UnaryFloatFunction& f, const float* x, float* y, int64_t n) {
  // Tasks of 16 KiB at least, a multiple of every vector.
  ParallelForChunks(n, 4096, [&](int64_t first, int64_t count) { HWY_DYNAMIC_DISPATCH(UnaryFloatRange)(f, x + first, y + first, count); });
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
