// The epilogue of engine/backends/simd/conv_epilogue.h, for each target Highway compiles: a file
// that includes this inside its HWY_TARGET_INCLUDE pass gets, in tilebank::engine::HWY_NAMESPACE,
// ApplyConvEpilogueStep and ApplyConvEpilogue (a vector) and ApplyConvEpilogueToBlock (vectors in
// memory, a step at a time).
#if defined(TILEBANK_CONV_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TILEBANK_CONV_EPILOGUE_INL_H_
#undef TILEBANK_CONV_EPILOGUE_INL_H_
#else
#define TILEBANK_CONV_EPILOGUE_INL_H_
#endif

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "engine/backends/simd/vector_math-inl.h"

#include "engine/backends/simd/conv_epilogue.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 1 / (1 + exp(-x)), from exp(-|x|) so that nothing overflows. The denominator lies in [1, 2]: on
// x86 its approximate reciprocal (12 or 14 bits) and one Newton step (r (2 - q r)) give float
// precision for a third of a division's cost; elsewhere (8-bit estimates) a division.
template <class D>
HWY_INLINE hn::Vec<D> SigmoidOf(D d, hn::Vec<D> x) {
  const auto e = ExpNonPositive(d, hn::Neg(hn::Abs(x)));  // NaN: 0, and the NaN comes back below
  const auto q = hn::Add(hn::Set(d, 1.f), e);
#if HWY_ARCH_X86
  const auto r = hn::ApproximateReciprocal(q);
  const auto s = hn::Mul(r, hn::NegMulAdd(q, r, hn::Set(d, 2.f)));
#else
  const auto s = hn::Div(hn::Set(d, 1.f), q);
#endif
  return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(e, s), s));
}

// 0.5 x (1 + erf(x / sqrt(2))), erf by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7),
// as oneDNN's gelu_erf computes it: 1 - erf(z) = t (a1 + t (a2 + ...)) exp(-z^2), t = 1 / (1 + p z).
template <class D>
HWY_INLINE hn::Vec<D> GeluErfOf(D d, hn::Vec<D> x) {
  const auto z = hn::Min(hn::Mul(hn::Abs(x), hn::Set(d, 0.70710678f)), hn::Set(d, 10.f));  // erf(10) is 1 in float; an infinity stays finite here
  const auto q = hn::MulAdd(z, hn::Set(d, 0.3275911f), hn::Set(d, 1.f));  // >= 1
#if HWY_ARCH_X86
  const auto r = hn::ApproximateReciprocal(q);  // and a Newton step, as SigmoidOf
  const auto t = hn::Mul(r, hn::NegMulAdd(q, r, hn::Set(d, 2.f)));
#else
  const auto t = hn::Div(hn::Set(d, 1.f), q);
#endif
  auto poly = hn::MulAdd(hn::Set(d, 1.061405429f), t, hn::Set(d, -1.453152027f));
  poly = hn::MulAdd(poly, t, hn::Set(d, 1.421413741f));
  poly = hn::MulAdd(poly, t, hn::Set(d, -0.284496736f));
  poly = hn::Mul(hn::MulAdd(poly, t, hn::Set(d, 0.254829592f)), t);
  const auto tail = hn::Mul(poly, ExpNonPositive(d, hn::Neg(hn::Mul(z, z))));  // 1 - erf(|x| / sqrt(2))
  const auto half_x = hn::Mul(hn::Set(d, 0.5f), x);
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(half_x, tail), hn::Mul(half_x, hn::Sub(hn::Set(d, 2.f), tail)));
}

// y through one step; `residual`: this vector's residual, where the step adds it.
template <class D>
HWY_INLINE hn::Vec<D> ApplyConvEpilogueStep(D d, hn::Vec<D> y, const ConvEpilogueStep& s, const float* residual) {
  using Kind = ConvEpilogueStep::Kind;
  switch (s.kind) {
    case Kind::kAddResidual: return hn::Add(y, hn::LoadU(d, residual));
    case Kind::kRelu: return hn::Max(y, hn::Zero(d));
    case Kind::kLeakyRelu: return hn::IfThenElse(hn::Lt(y, hn::Zero(d)), hn::Mul(y, hn::Set(d, s.alpha)), y);
    case Kind::kClip: return hn::Min(hn::Max(y, hn::Set(d, s.alpha)), hn::Set(d, s.beta));
    case Kind::kSigmoid: return SigmoidOf(d, y);
    case Kind::kSwish: return hn::Mul(y, SigmoidOf(d, y));
    case Kind::kHardSwish: return hn::Mul(y, hn::Min(hn::Max(hn::MulAdd(y, hn::Set(d, 1.f / 6), hn::Set(d, 0.5f)), hn::Zero(d)), hn::Set(d, 1.f)));
    case Kind::kTanh: return hn::Tanh(d, y);
    case Kind::kGeluTanh: {  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
      const auto inner = hn::Mul(hn::Set(d, 0.7978845608f), hn::MulAdd(hn::Mul(hn::Mul(y, y), y), hn::Set(d, 0.044715f), y));
      return hn::Mul(hn::Mul(hn::Set(d, 0.5f), y), hn::Add(hn::Set(d, 1.f), hn::Tanh(d, inner)));
    }
    case Kind::kGeluErf: return GeluErfOf(d, y);
  }
  return y;
}

// y (the product plus the bias) through e's steps; `residual`: this vector's residual, where a step adds it.
template <class D>
HWY_INLINE hn::Vec<D> ApplyConvEpilogue(D d, hn::Vec<D> y, const ConvEpilogue& e, const float* residual) {
  for (const ConvEpilogueStep& s : e.steps) y = ApplyConvEpilogueStep(d, y, s, residual);
  return y;
}

// y = f(y, residual of y) over `count` vectors of `values` in place, four at a time so that a long
// function's latency overlaps; ALIGNED: `values` is aligned to a vector.
template <bool ALIGNED, class D, class F>
HWY_INLINE void MapConvBlockAt(D d, float* HWY_RESTRICT values, size_t count, const float* residual, size_t residual_stride, const F& f) {
  const size_t N = hn::Lanes(d);
  auto load = [d](const float* p) HWY_ATTR { return ALIGNED ? hn::Load(d, p) : hn::LoadU(d, p); };
  auto store = [d](hn::Vec<D> v, float* p) HWY_ATTR {
    if constexpr (ALIGNED) {
      hn::Store(v, d, p);
    } else {
      hn::StoreU(v, d, p);
    }
  };
  auto residual_of = [&](size_t v) { return residual ? residual + v * residual_stride : nullptr; };
  size_t v = 0;
  for (; v + 4 <= count; v += 4) {
    const auto y0 = f(load(values + v * N), residual_of(v)), y1 = f(load(values + (v + 1) * N), residual_of(v + 1));
    const auto y2 = f(load(values + (v + 2) * N), residual_of(v + 2)), y3 = f(load(values + (v + 3) * N), residual_of(v + 3));
    store(y0, values + v * N), store(y1, values + (v + 1) * N);
    store(y2, values + (v + 2) * N), store(y3, values + (v + 3) * N);
  }
  for (; v < count; ++v) store(f(load(values + v * N), residual_of(v)), values + v * N);
}

// The epilogue on `count` vectors of `values` (Lanes(d) apart) in place, a step at a time over all
// of them, the step's kind chosen once per block, not once per vector; vector v's residual at
// residual + v * residual_stride.
template <bool ALIGNED, class D>
HWY_INLINE void ApplyConvEpilogueToBlockAt(D d, float* HWY_RESTRICT values, size_t count, const ConvEpilogue& e, const float* residual,
                                           size_t residual_stride) {
  using Kind = ConvEpilogueStep::Kind;
  using V = hn::Vec<D>;
  for (const ConvEpilogueStep& s : e.steps) {
    switch (s.kind) {
      case Kind::kSwish:
        MapConvBlockAt<ALIGNED>(d, values, count, residual, residual_stride, [d](V y, const float*) HWY_ATTR { return hn::Mul(y, SigmoidOf(d, y)); });
        break;
      case Kind::kSigmoid:
        MapConvBlockAt<ALIGNED>(d, values, count, residual, residual_stride, [d](V y, const float*) HWY_ATTR { return SigmoidOf(d, y); });
        break;
      default:
        MapConvBlockAt<ALIGNED>(d, values, count, residual, residual_stride,
                                [d, &s](V y, const float* r) HWY_ATTR { return ApplyConvEpilogueStep(d, y, s, r); });
    }
  }
}

template <class D>
HWY_INLINE void ApplyConvEpilogueToBlock(D d, float* HWY_RESTRICT values, size_t count, const ConvEpilogue& e, const float* residual,
                                         size_t residual_stride) {
  ApplyConvEpilogueToBlockAt<true>(d, values, count, e, residual, residual_stride);
}

// ApplyConvEpilogueToBlock's activations (no residual) over vectors anywhere in memory.
template <class D>
HWY_INLINE void ApplyConvEpilogueToBlockUnaligned(D d, float* HWY_RESTRICT values, size_t count, const ConvEpilogue& e) {
  ApplyConvEpilogueToBlockAt<false>(d, values, count, e, nullptr, 0);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TILEBANK_CONV_EPILOGUE_INL_H_
