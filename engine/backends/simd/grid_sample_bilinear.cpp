// engine/backends/simd/grid_sample_bilinear.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
//
// Coordinates as the reference computes them (engine/kernels/grid_sample_taps.h), in float: x
// unnormalized to ((x + 1) / 2) (w - 1) with align_corners, else ((x + 1) w - 1) / 2; border padding
// clamps it into [0, w - 1]. The four taps of floor(x), floor(x) + 1 by floor(y), floor(y) + 1 each
// count where inside the plane; a tap outside reads the plane's first value with weight 0.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/grid_sample_bilinear.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>

#include "engine/backends/simd/grid_sample_bilinear.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float) > 0 ? HWY_MAX_BYTES / sizeof(float) : 1;

// Lanes' coordinate in the plane along an axis of `size`: unnormalized, clamped where border (an
// infinite one to the edge); `usable` cleared where it is NaN, or infinite without border.
template <class D>
HWY_INLINE hn::Vec<D> Unnormalized(D d, hn::Vec<D> v, int64_t size, bool align_corners, bool border, hn::Mask<D>* usable) {
  const auto one = hn::Set(d, 1.f);
  const auto s = align_corners ? hn::Mul(hn::Mul(hn::Add(v, one), hn::Set(d, 0.5f)), hn::Set(d, static_cast<float>(size - 1)))
                               : hn::Mul(hn::Sub(hn::Mul(hn::Add(v, one), hn::Set(d, static_cast<float>(size))), one), hn::Set(d, 0.5f));
  if (!border) {
    *usable = hn::And(*usable, hn::IsFinite(s));
    return s;
  }
  *usable = hn::And(*usable, hn::Not(hn::IsNaN(s)));
  return hn::Min(hn::Max(s, hn::Zero(d)), hn::Set(d, static_cast<float>(size - 1)));
}

// N positions from p: gx, gy their grid coordinates; each channel's sample stored at y + c * positions
// + p for `count` lanes (a partial vector through a buffer).
template <class D>
HWY_INLINE void Sample(D d, const GridSampleBilinearShape& s, const float* image, hn::Vec<D> gx, hn::Vec<D> gy, float* y, int64_t p, size_t count) {
  const hn::RebindToSigned<D> di;
  auto finite = hn::FirstN(d, hn::Lanes(d));  // every lane usable, until a coordinate says not
  const auto sx = Unnormalized(d, gx, s.w, s.align_corners, s.border, &finite), sy = Unnormalized(d, gy, s.h, s.align_corners, s.border, &finite);
  // Floors clamped to a column or row outside the plane on either side before converting to int32.
  const auto floor_x = hn::Floor(sx), floor_y = hn::Floor(sy);
  const auto fx = hn::Min(hn::Max(floor_x, hn::Set(d, -2.f)), hn::Set(d, static_cast<float>(s.w + 1)));
  const auto fy = hn::Min(hn::Max(floor_y, hn::Set(d, -2.f)), hn::Set(d, static_cast<float>(s.h + 1)));
  const auto lx = hn::Sub(sx, floor_x), ly = hn::Sub(sy, floor_y);
  const auto x0 = hn::ConvertTo(di, hn::IfThenElseZero(finite, fx)), y0 = hn::ConvertTo(di, hn::IfThenElseZero(finite, fy));
  const auto one_i = hn::Set(di, 1), zero_i = hn::Zero(di), w_i = hn::Set(di, static_cast<int32_t>(s.w)), h_i = hn::Set(di, static_cast<int32_t>(s.h));
  const auto x1 = hn::Add(x0, one_i), y1 = hn::Add(y0, one_i);
  auto inside = [&](hn::Vec<decltype(di)> v, hn::Vec<decltype(di)> size) HWY_ATTR {
    return hn::RebindMask(d, hn::And(hn::Not(hn::Lt(v, zero_i)), hn::Lt(v, size)));
  };
  const auto in_x0 = inside(x0, w_i), in_x1 = inside(x1, w_i), in_y0 = hn::And(inside(y0, h_i), finite), in_y1 = hn::And(inside(y1, h_i), finite);
  const auto one = hn::Set(d, 1.f), rx = hn::Sub(one, lx), ry = hn::Sub(one, ly);
  const int64_t plane = s.h * s.w;
  // Weights of taps outside are 0 (a non-finite coordinate's too, whose fractions are NaN).
  const auto m00 = hn::And(in_y0, in_x0), m01 = hn::And(in_y0, in_x1), m10 = hn::And(in_y1, in_x0), m11 = hn::And(in_y1, in_x1);
  const auto w00 = hn::IfThenElseZero(m00, hn::Mul(ry, rx)), w01 = hn::IfThenElseZero(m01, hn::Mul(ry, lx));
  const auto w10 = hn::IfThenElseZero(m10, hn::Mul(ly, rx)), w11 = hn::IfThenElseZero(m11, hn::Mul(ly, lx));
  // Offsets of taps outside read offset 0 (weight 0).
  auto offset = [&](hn::Vec<decltype(di)> row, hn::Vec<decltype(di)> col, hn::Mask<D> in) HWY_ATTR {
    return hn::IfThenElseZero(hn::RebindMask(di, in), hn::Add(hn::Mul(row, w_i), col));
  };
  const auto o00 = offset(y0, x0, m00), o01 = offset(y0, x1, m01), o10 = offset(y1, x0, m10), o11 = offset(y1, x1, m11);
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* channel = image + c * plane;
    // A tap outside adds nothing, not 0 times the value it gathered (which may be infinite).
    auto v = hn::Mul(w00, hn::IfThenElseZero(m00, hn::GatherIndex(d, channel, o00)));
    v = hn::MulAdd(w01, hn::IfThenElseZero(m01, hn::GatherIndex(d, channel, o01)), v);
    v = hn::MulAdd(w10, hn::IfThenElseZero(m10, hn::GatherIndex(d, channel, o10)), v);
    v = hn::MulAdd(w11, hn::IfThenElseZero(m11, hn::GatherIndex(d, channel, o11)), v);
    float* out = y + c * s.positions + p;
    if (count == hn::Lanes(d)) {
      hn::StoreU(v, d, out);
    } else {
      HWY_ALIGN float buffer[kMaxLanes];
      hn::Store(v, d, buffer);
      std::copy(buffer, buffer + count, out);
    }
  }
}

void Positions(const GridSampleBilinearShape& s, const float* image, const float* grid, float* y, int64_t begin, int64_t end) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t p = begin;
#if HWY_TARGET != HWY_SCALAR  // one lane has no odd lanes to concatenate: every position from the buffer
  for (; p + N <= end; p += N) {  // x and y interleaved: the even and the odd lanes of two vectors
    const auto lo = hn::LoadU(d, grid + 2 * p), hi = hn::LoadU(d, grid + 2 * p + N);
    Sample(d, s, image, hn::ConcatEven(d, hi, lo), hn::ConcatOdd(d, hi, lo), y, p, static_cast<size_t>(N));
  }
#endif
  for (; p + N <= end; p += N) Sample(d, s, image, hn::Set(d, grid[2 * p]), hn::Set(d, grid[2 * p + 1]), y, p, static_cast<size_t>(N));
  if (p < end) {  // the last positions, from a buffer (coordinates past them 0: inside the plane)
    HWY_ALIGN float xs[kMaxLanes] = {}, ys[kMaxLanes] = {};
    for (int64_t k = 0; k < end - p; ++k) xs[k] = grid[2 * (p + k)], ys[k] = grid[2 * (p + k) + 1];
    Sample(d, s, image, hn::Load(d, xs), hn::Load(d, ys), y, p, static_cast<size_t>(end - p));
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(Positions);

void GridSampleBilinearPositions(const GridSampleBilinearShape& s, const float* image, const float* grid, float* y, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(Positions)(s, image, grid, y, begin, end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
