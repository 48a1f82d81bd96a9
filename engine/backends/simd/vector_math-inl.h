// Vector helpers for each target Highway compiles: a file that includes this inside its
// HWY_TARGET_INCLUDE pass gets, in tilebank::engine::HWY_NAMESPACE, ExpNonPositive (the contract
// of exp_non_positive_constants.h) and LoadTail / StoreTail (a row's last, partial vector).
#if defined(TILEBANK_VECTOR_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TILEBANK_VECTOR_MATH_INL_H_
#undef TILEBANK_VECTOR_MATH_INL_H_
#else
#define TILEBANK_VECTOR_MATH_INL_H_
#endif

#include <hwy/highway.h>

#include "engine/backends/simd/exp_non_positive_constants.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// exp(x) for x <= 0: a third fewer operations than Highway's general Exp (a Swish pass over
// EfficientNet-B0's 96x112x112 values 1.5x faster), the same precision in float.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> x) {
  namespace c = exp_non_positive;
  const hn::RebindToSigned<D> di;
  const auto lowest = hn::Set(d, c::kLowest);
  const auto below = hn::Lt(x, lowest);
  const auto clamped = hn::IfThenElse(below, lowest, x);  // a NaN stays NaN through the polynomial (Max would drop it on x86)
  // k = round(x log2 e) by the float adder: adding 1.5 * 2^23 leaves k in the low mantissa bits.
  const auto shifter = hn::Set(d, 12582912.f);
  const auto shifted = hn::MulAdd(clamped, hn::Set(d, c::kLog2e), shifter);
  const auto k = hn::Sub(shifted, shifter);
  auto r = hn::NegMulAdd(k, hn::Set(d, c::kLn2High), clamped);
  r = hn::NegMulAdd(k, hn::Set(d, c::kLn2Low), r);
  auto p = hn::Set(d, c::kTaylor[6]);
  for (int i = 5; i >= 0; --i) p = hn::MulAdd(p, r, hn::Set(d, c::kTaylor[i]));
  // 2^k: (k + 127) << 23, with k + 127 the shifted bits less those of 1.5 * 2^23 (0x4B400000), plus 127.
  const auto two_to_k = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, shifted), hn::Set(di, 127 - 0x4B400000))));
  return hn::IfThenZeroElse(below, hn::Mul(p, two_to_k));
}

// A row's last, partial vector goes through a buffer, so that nothing past the row is read or
// written: Highway's MaskedLoad and BlendedStore touch a whole vector on targets without masked
// memory operations (HWY_MEM_OPS_MIGHT_FAULT: SSE4, SSSE3), which faults at the end of a mapping
// and races with the thread that writes the next row.
template <class D>
HWY_INLINE hn::Vec<D> LoadTail(D d, const float* HWY_RESTRICT p, size_t count, float fill) {
  HWY_ALIGN float buffer[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(hn::Set(d, fill), d, buffer);
  for (size_t k = 0; k < count; ++k) buffer[k] = p[k];
  return hn::Load(d, buffer);
}

template <class D>
HWY_INLINE void StoreTail(D d, hn::Vec<D> v, float* HWY_RESTRICT p, size_t count) {
  HWY_ALIGN float buffer[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, buffer);
  for (size_t k = 0; k < count; ++k) p[k] = buffer[k];
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TILEBANK_VECTOR_MATH_INL_H_
