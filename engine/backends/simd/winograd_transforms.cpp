// The tile transforms of engine/backends/simd/winograd_transforms.h, compiled once per instruction
// set Highway targets (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the
// best the CPU supports on the first call. A tile is transformed a vector of channels at a time,
// its first pass through a small buffer on the stack (no arrays of vectors: scalable targets have
// none), the matrices' constants unrolled into the code (kWinogradTables).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/winograd_transforms.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <utility>

#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/unroll-inl.h"
#include "engine/backends/simd/winograd_transforms.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kMaxLanes = 16;

enum class Matrix { kBt, kAt };

template <int M, Matrix W>
constexpr float Coefficient(int index) {
  return W == Matrix::kBt ? kWinogradTables<M>.bt[index] : kWinogradTables<M>.at[index];
}

// acc + c * x for the constant c of (M, W) at `Index`: nothing for 0, an add or subtract for +-1.
template <int M, Matrix W, int Index, class D, class V>
HWY_INLINE V Term(D d, V acc, const float* HWY_RESTRICT x) {
  constexpr float c = Coefficient<M, W>(Index);
  if constexpr (c == 0.f) {
    return acc;
  } else if constexpr (c == 1.f) {
    return hn::Add(acc, hn::LoadU(d, x));
  } else if constexpr (c == -1.f) {
    return hn::Sub(acc, hn::LoadU(d, x));
  } else {
    return hn::MulAdd(hn::Set(d, c), hn::LoadU(d, x), acc);
  }
}

// Row `Row` of the (M, W) matrix, `Cols` wide, times the vectors at base + k * stride.
template <int M, Matrix W, int Row, int Cols, class D, int... K>
HWY_INLINE hn::Vec<D> Dot(D d, const float* HWY_RESTRICT base, size_t stride, std::integer_sequence<int, K...>) {
  auto acc = hn::Zero(d);
  ((acc = Term<M, W, Row * Cols + K>(d, acc, base + K * stride)), ...);
  return acc;
}

// One tile's input transform, a vector of channels: B^T d B, d's element (k, j) at
// tile + k * row_stride + j * col_stride; element x of the result to out + x * out_stride.
template <int M, class D>
HWY_INLINE void InputTile(D d, const float* HWY_RESTRICT tile, size_t row_stride, size_t col_stride, float* HWY_RESTRICT out, size_t out_stride) {
  constexpr int a = M + 2;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN float mid[a * a * kMaxLanes];
  constexpr auto rows = std::make_integer_sequence<int, a>();
  Unroll(rows, [&](auto i) HWY_ATTR {
    Unroll(rows, [&](auto j) HWY_ATTR { hn::Store(Dot<M, Matrix::kBt, decltype(i)::value, a>(d, tile + j * col_stride, row_stride, rows), d, mid + (i * a + j) * N); });
  });
  Unroll(rows, [&](auto i) HWY_ATTR {
    Unroll(rows, [&](auto j) HWY_ATTR { hn::StoreU(Dot<M, Matrix::kBt, decltype(j)::value, a>(d, mid + i * a * N, N, rows), d, out + (i * a + j) * out_stride); });
  });
}

template <int M, class D>
void InputTiles(D d, const WinogradGeometry& g, const float* src, float* v, int64_t begin, int64_t end) {
  constexpr int a = M + 2;
  const size_t N = hn::Lanes(d);
  const int64_t B = g.block, cp = g.c_blocks * B, tiles = g.tiles(), per_image = g.tiles_h * g.tiles_w;
  HWY_ALIGN float padded[a * a * kMaxLanes];
  for (int64_t t = begin; t < end; ++t) {
    const int64_t image = t / per_image, th = t % per_image / g.tiles_w, tw = t % g.tiles_w;
    const int64_t h0 = th * M - g.pad_top, w0 = tw * M - g.pad_left;
    const bool inside = h0 >= 0 && w0 >= 0 && h0 + a <= g.h && w0 + a <= g.w;
    for (int64_t cb = 0; cb < g.c_blocks; ++cb) {
      const float* plane = src + (image * g.c_blocks + cb) * g.h * g.w * B;
      for (int64_t l = 0; l < B; l += static_cast<int64_t>(N)) {
        float* out = v + t * cp + cb * B + l;
        if (inside) {
          InputTile<M>(d, plane + (h0 * g.w + w0) * B + l, static_cast<size_t>(g.w * B), static_cast<size_t>(B), out, static_cast<size_t>(tiles * cp));
          continue;
        }
        for (int i = 0; i < a; ++i) {  // a tile over the border: zeros outside the image
          const int64_t row = h0 + i;
          for (int j = 0; j < a; ++j) {
            const int64_t col = w0 + j;
            const bool in_image = row >= 0 && row < g.h && col >= 0 && col < g.w;
            hn::Store(in_image ? hn::LoadU(d, plane + (row * g.w + col) * B + l) : hn::Zero(d), d, padded + (i * a + j) * N);
          }
        }
        InputTile<M>(d, padded, a * N, N, out, static_cast<size_t>(tiles * cp));
      }
    }
  }
}

template <int M, class D>
void OutputTiles(D d, const WinogradGeometry& g, const float* products, const ConvEpilogue& e, float* dst, int64_t begin, int64_t end) {
  constexpr int a = M + 2;
  const size_t N = hn::Lanes(d);
  const int64_t B = g.out_block, ocp = g.oc_blocks * B, tiles = g.tiles(), per_image = g.tiles_h * g.tiles_w;
  const size_t position_stride = static_cast<size_t>(tiles * ocp);
  HWY_ALIGN float mid[M * a * kMaxLanes];
  constexpr auto rows = std::make_integer_sequence<int, M>();
  constexpr auto cols = std::make_integer_sequence<int, a>();
  for (int64_t t = begin; t < end; ++t) {
    const int64_t image = t / per_image, th = t % per_image / g.tiles_w, tw = t % g.tiles_w;
    const int64_t oh0 = th * M, ow0 = tw * M;
    const int64_t rows_left = std::min<int64_t>(M, g.oh - oh0), cols_left = std::min<int64_t>(M, g.ow - ow0);
    for (int64_t ob = 0; ob < g.oc_blocks; ++ob)
      for (int64_t l = 0; l < B; l += static_cast<int64_t>(N)) {
        const float* tile = products + t * ocp + ob * B + l;  // element (k, j) at tile + (k * a + j) * position_stride
        Unroll(rows, [&](auto i) HWY_ATTR {
          Unroll(cols, [&](auto j) HWY_ATTR {
            hn::Store(Dot<M, Matrix::kAt, decltype(i)::value, a>(d, tile + j * position_stride, a * position_stride, cols), d, mid + (i * a + j) * N);
          });
        });
        const auto bias = e.bias ? hn::LoadU(d, e.bias + ob * B + l) : hn::Zero(d);
        const int64_t valid = e.channels - (ob * B + l);
        const auto lanes = hn::FirstN(d, static_cast<size_t>(valid <= 0 ? 0 : valid));
        const bool partial = valid < static_cast<int64_t>(N);
        float* plane = dst + (image * g.oc_blocks + ob) * g.oh * g.ow * B + l;
        const float* residual_plane = e.residual ? e.residual + (image * g.oc_blocks + ob) * g.oh * g.ow * B + l : nullptr;
        Unroll(rows, [&](auto i) HWY_ATTR {
          if (i >= rows_left) return;
          Unroll(rows, [&](auto j) HWY_ATTR {
            if (j >= cols_left) return;
            const int64_t at = ((oh0 + i) * g.ow + ow0 + j) * B;
            auto y = hn::Add(Dot<M, Matrix::kAt, decltype(j)::value, a>(d, mid + i * a * N, N, cols), bias);
            y = ApplyConvEpilogue(d, y, e, residual_plane ? residual_plane + at : nullptr);
            if (partial) y = hn::IfThenElseZero(lanes, y);
            hn::StoreU(y, d, plane + at);
          });
        });
      }
  }
}

template <int M>
void InputTransformOf(const WinogradGeometry& g, const float* src, float* v, int64_t begin, int64_t end) {
  // Sixteen lanes where the block and the CPU allow, else eight (fewer on targets narrower than that).
  if (g.block % 16 == 0 && hn::Lanes(hn::ScalableTag<float>()) >= 16) return InputTiles<M>(hn::CappedTag<float, 16>(), g, src, v, begin, end);
  InputTiles<M>(hn::CappedTag<float, 8>(), g, src, v, begin, end);
}

template <int M>
void OutputTransformOf(const WinogradGeometry& g, const float* products, const ConvEpilogue& e, float* dst, int64_t begin, int64_t end) {
  if (g.out_block % 16 == 0 && hn::Lanes(hn::ScalableTag<float>()) >= 16) return OutputTiles<M>(hn::CappedTag<float, 16>(), g, products, e, dst, begin, end);
  OutputTiles<M>(hn::CappedTag<float, 8>(), g, products, e, dst, begin, end);
}

void InputTransform(const WinogradGeometry& g, const float* src, float* v, int64_t begin, int64_t end) {
  switch (g.m) {
    case 2: return InputTransformOf<2>(g, src, v, begin, end);
    case 4: return InputTransformOf<4>(g, src, v, begin, end);
    case 6: return InputTransformOf<6>(g, src, v, begin, end);
  }
}

void OutputTransform(const WinogradGeometry& g, const float* products, const ConvEpilogue& e, float* dst, int64_t begin, int64_t end) {
  switch (g.m) {
    case 2: return OutputTransformOf<2>(g, products, e, dst, begin, end);
    case 4: return OutputTransformOf<4>(g, products, e, dst, begin, end);
    case 6: return OutputTransformOf<6>(g, products, e, dst, begin, end);
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(InputTransform);
HWY_EXPORT(OutputTransform);

void WinogradInputTransform(const WinogradGeometry& g, const float* src, float* v, int64_t tile_begin, int64_t tile_end) {
  HWY_DYNAMIC_DISPATCH(InputTransform)(g, src, v, tile_begin, tile_end);
}

void WinogradOutputTransform(const WinogradGeometry& g, const float* products, const ConvEpilogue& e, float* dst, int64_t tile_begin,
                             int64_t tile_end) {
  HWY_DYNAMIC_DISPATCH(OutputTransform)(g, products, e, dst, tile_begin, tile_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
