// Loops unrolled at compile time, for each target Highway compiles: a file that includes this
// inside its HWY_TARGET_INCLUDE pass gets tilebank::engine::HWY_NAMESPACE::Unroll.
#if defined(TILEBANK_UNROLL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TILEBANK_UNROLL_INL_H_
#undef TILEBANK_UNROLL_INL_H_
#else
#define TILEBANK_UNROLL_INL_H_
#endif

#include <hwy/highway.h>

#include <type_traits>
#include <utility>

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {

// Calls f(std::integral_constant<int, I>) for I in [0, n): loops unrolled at compile time.
template <class F, int... I>
HWY_INLINE void Unroll(std::integer_sequence<int, I...>, F&& f) {
  (f(std::integral_constant<int, I>()), ...);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TILEBANK_UNROLL_INL_H_
