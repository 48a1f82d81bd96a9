// Compiled once per instruction set Highway targets (hwy/foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best the CPU supports on the first call. Each loop's last partial
// vector is finished by the scalar form of the same arithmetic.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/kernels/quantized_loops_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>

#include "engine/kernels/quantized_loops_simd.h"


HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using Df = hn::ScalableTag<float>;
using Di = hn::RebindToSigned<Df>;

// s / divisor as far as rounding it to an integer can tell: s * (1 / divisor), which is within two
// ulps of the quotient, unless a lane lies within 1/1024 of a half, where only the quotient itself
// rounds as the division does (the vector is divided then). Values that matter are clamped within
// a few hundred, where two ulps are under 1/16000.
HWY_INLINE hn::Vec<Df> QuotientToRound(hn::Vec<Df> s, hn::Vec<Df> divisor, hn::Vec<Df> inverse) {
  const Df df;
  const auto p = hn::Mul(s, inverse);
  const auto off_half = hn::Abs(hn::Sub(hn::Sub(p, hn::Floor(p)), hn::Set(df, 0.5f)));
  return hn::AllFalse(df, hn::Lt(off_half, hn::Set(df, 1.0f / 1024))) ? p : hn::Div(s, divisor);
}

// round_half_even(v) + zero, saturated into the 8-bit type of `d8` (v in float lanes). Clamped to
// [lo, hi] first, v converts to int32 with no overflow.
template <class D8>
HWY_INLINE hn::Vec<D8> Requantize(D8 d8, hn::Vec<Df> v, hn::Vec<Df> zero, hn::Vec<Df> lo, hn::Vec<Df> hi) {
  const Di di;
  const auto r = hn::Add(hn::Round(hn::Min(hn::Max(v, lo), hi)), zero);
  return hn::DemoteTo(d8, hn::ConvertTo(di, r));  // saturating
}

template <class T>
HWY_INLINE void QuantizeLoop(const float* HWY_RESTRICT x, int64_t n, float scale, float zero, float low, float high, T* HWY_RESTRICT y) {
  const Df df;
  const hn::Rebind<T, Df> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto s = hn::Set(df, scale), inverse = hn::Set(df, 1.0f / scale), z = hn::Set(df, zero), lo = hn::Set(df, low - zero - 1),
             hi = hn::Set(df, high - zero + 1);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(Requantize(d8, QuotientToRound(hn::LoadU(df, x + i), s, inverse), z, lo, hi), d8, y + i);
  for (; i < n; ++i) y[i] = static_cast<T>(Requantized(x[i] / scale, zero, low, high));
}

template <class T>
HWY_INLINE void DequantizeLoop(const T* HWY_RESTRICT q, int64_t n, float scale, float zero, float* HWY_RESTRICT y) {
  const Df df;
  const Di di;
  const hn::Rebind<T, Df> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto s = hn::Set(df, scale), z = hn::Set(df, zero);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::Sub(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, q + i))), z), s), df, y + i);
  for (; i < n; ++i) y[i] = (static_cast<float>(q[i]) - zero) * scale;
}

void QuantizeToU8(const float* x, int64_t n, float scale, float zero, uint8_t* y) { QuantizeLoop(x, n, scale, zero, 0.0f, 255.0f, y); }
void QuantizeToS8(const float* x, int64_t n, float scale, float zero, int8_t* y) { QuantizeLoop(x, n, scale, zero, -128.0f, 127.0f, y); }
void DequantizeU8(const uint8_t* q, int64_t n, float scale, float zero, float* y) { DequantizeLoop(q, n, scale, zero, y); }
void DequantizeS8(const int8_t* q, int64_t n, float scale, float zero, float* y) { DequantizeLoop(q, n, scale, zero, y); }

void MinMaxFloats(const float* HWY_RESTRICT x, int64_t n, float* low, float* high) {
  const Df df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  float lo = x[0], hi = x[0];
  int64_t i = 0;
  if (n >= N) {
    auto vlo = hn::LoadU(df, x), vhi = vlo;
    for (i = N; i + N <= n; i += N) {
      const auto v = hn::LoadU(df, x + i);
      vlo = hn::Min(vlo, v);
      vhi = hn::Max(vhi, v);
    }
    lo = hn::GetLane(hn::MinOfLanes(df, vlo));
    hi = hn::GetLane(hn::MaxOfLanes(df, vhi));
  }
  for (; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  *low = lo;
  *high = hi;
}

void AddQuantizedU8(const uint8_t* HWY_RESTRICT a, const uint8_t* HWY_RESTRICT b, int64_t n, const AddQuantization& q, uint8_t* HWY_RESTRICT y) {
  const Df df;
  const Di di;
  const hn::Rebind<uint8_t, Df> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto as = hn::Set(df, q.a_scale), az = hn::Set(df, q.a_zero), bs = hn::Set(df, q.b_scale), bz = hn::Set(df, q.b_zero);
  const auto ys = hn::Set(df, q.y_scale), y_inverse = hn::Set(df, 1.0f / q.y_scale), yz = hn::Set(df, q.y_zero), lo = hn::Set(df, -q.y_zero - 1), hi = hn::Set(df, 255.0f - q.y_zero + 1);
  const auto zero = hn::Zero(df);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto va = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, a + i))), az), as);
    const auto vb = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, b + i))), bz), bs);
    auto s = hn::Add(va, vb);
    if (q.relu) s = hn::Max(s, zero);
    hn::StoreU(Requantize(d8, QuotientToRound(s, ys, y_inverse), yz, lo, hi), d8, y + i);
  }
  for (; i < n; ++i) y[i] = static_cast<uint8_t>(Requantized(AddDequantized(a[i], b[i], q) / q.y_scale, q.y_zero, 0.0f, 255.0f));
}

}  // namespace tilebank::engine::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine::kernels {

HWY_EXPORT(QuantizeToU8);
HWY_EXPORT(QuantizeToS8);
HWY_EXPORT(DequantizeU8);
HWY_EXPORT(DequantizeS8);
HWY_EXPORT(AddQuantizedU8);
HWY_EXPORT(MinMaxFloats);

void QuantizeToU8(const float* x, int64_t n, float scale, float zero, uint8_t* y) { HWY_DYNAMIC_DISPATCH(QuantizeToU8)(x, n, scale, zero, y); }
void QuantizeToS8(const float* x, int64_t n, float scale, float zero, int8_t* y) { HWY_DYNAMIC_DISPATCH(QuantizeToS8)(x, n, scale, zero, y); }
void DequantizeU8(const uint8_t* q, int64_t n, float scale, float zero, float* y) { HWY_DYNAMIC_DISPATCH(DequantizeU8)(q, n, scale, zero, y); }
void DequantizeS8(const int8_t* q, int64_t n, float scale, float zero, float* y) { HWY_DYNAMIC_DISPATCH(DequantizeS8)(q, n, scale, zero, y); }
void MinMaxFloats(const float* x, int64_t n, float* low, float* high) { HWY_DYNAMIC_DISPATCH(MinMaxFloats)(x, n, low, high); }
void AddQuantizedU8(const uint8_t* a, const uint8_t* b, int64_t n, const AddQuantization& q, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(AddQuantizedU8)(a, b, n, q, y);
}

}  // namespace tilebank::engine::kernels
#endif
