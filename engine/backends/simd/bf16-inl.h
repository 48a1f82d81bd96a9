// bfloat16 <-> float32 for each target Highway compiles: a file that includes this inside its
// HWY_TARGET_INCLUDE pass gets, in tilebank::engine::HWY_NAMESPACE, LoadAs / StoreAs over float or
// bfloat16 memory (bfloat16 as uint16_t bits: a float32's upper half), whole vectors and a row's
// last, partial one. Stores round to nearest even, as oneDNN's bf16 kernels and reorders do
// (Highway 1.0's DemoteTo truncates).
#if defined(TILEBANK_BF16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TILEBANK_BF16_INL_H_
#undef TILEBANK_BF16_INL_H_
#else
#define TILEBANK_BF16_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "engine/backends/simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
HWY_INLINE hn::Vec<D> LoadAs(D d, const float* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadAs(D d, const uint16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<D> du32;
  const hn::Rebind<uint16_t, D> du16;
  return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, hn::LoadU(du16, p))));
}

template <class D>
HWY_INLINE void StoreAs(D d, hn::Vec<D> v, float* HWY_RESTRICT p) {
  hn::StoreU(v, d, p);
}

// Round to nearest even: add 0x7FFF and the kept half's lowest bit, keep the upper half. (A NaN's
// payload may carry into its exponent; it stays a NaN or becomes an infinity.)
template <class D>
HWY_INLINE void StoreAs(D /* d */, hn::Vec<D> v, uint16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<D> du32;
  const hn::RebindToSigned<D> di32;
  const hn::Rebind<uint16_t, D> du16;
  const auto bits = hn::BitCast(du32, v);
  const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u));
  const auto upper = hn::ShiftRight<16>(hn::Add(bits, hn::Add(odd, hn::Set(du32, 0x7FFFu))));
  hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, upper)), du16, p);  // upper <= 0xFFFF: no saturation
}

// The partial vectors, through a buffer (vector_math-inl.h's LoadTail / StoreTail say why).
template <class D>
HWY_INLINE hn::Vec<D> LoadTailAs(D d, const float* HWY_RESTRICT p, size_t count, float fill) {
  return LoadTail(d, p, count, fill);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadTailAs(D d, const uint16_t* HWY_RESTRICT p, size_t count, float fill) {
  HWY_ALIGN uint16_t bits[HWY_MAX_BYTES / sizeof(float)] = {};
  for (size_t k = 0; k < count; ++k) bits[k] = p[k];
  return hn::IfThenElse(hn::FirstN(d, count), LoadAs(d, bits), hn::Set(d, fill));
}

template <class D>
HWY_INLINE void StoreTailAs(D d, hn::Vec<D> v, float* HWY_RESTRICT p, size_t count) {
  StoreTail(d, v, p, count);
}

template <class D>
HWY_INLINE void StoreTailAs(D d, hn::Vec<D> v, uint16_t* HWY_RESTRICT p, size_t count) {
  HWY_ALIGN uint16_t buffer[HWY_MAX_BYTES / sizeof(float)];
  StoreAs(d, v, buffer);
  for (size_t k = 0; k < count; ++k) p[k] = buffer[k];
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TILEBANK_BF16_INL_H_
