// The tile transforms of engine/backends/simd/winograd_transforms.h, compiled once per instruction
// set Highway targets (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the
// best the CPU supports on the first call. A tile is transformed a vector of channels at a time,
// through small buffers on the stack (no arrays of vectors: scalable targets have none).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/winograd_transforms.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include "engine/backends/simd/winograd_transforms.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kMaxAlpha = 8;
constexpr size_t kMaxLanes = 16;

// out = mat X mat^T for `in` (cols x cols vectors of N lanes) and `mat` rows x cols: first mid =
// mat X in (rows x cols), then out = mid X mat^T (rows x rows). Zero coefficients cost nothing.
template <class D>
HWY_INLINE void Transform2D(D d, const float* mat, int rows, int cols, const float* HWY_RESTRICT in, float* HWY_RESTRICT mid,
                            float* HWY_RESTRICT out) {
  const size_t N = hn::Lanes(d);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      auto acc = hn::Zero(d);
      for (int k = 0; k < cols; ++k)
        if (const float c = mat[i * cols + k]; c != 0.f) acc = hn::MulAdd(hn::Set(d, c), hn::Load(d, in + (k * cols + j) * N), acc);
      hn::Store(acc, d, mid + (i * cols + j) * N);
    }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < rows; ++j) {
      auto acc = hn::Zero(d);
      for (int k = 0; k < cols; ++k)
        if (const float c = mat[j * cols + k]; c != 0.f) acc = hn::MulAdd(hn::Set(d, c), hn::Load(d, mid + (i * cols + k) * N), acc);
      hn::Store(acc, d, out + (i * rows + j) * N);
    }
}

template <class D>
void InputTiles(D d, const WinogradMatrices& f, const WinogradGeometry& g, const float* src, float* v, int64_t begin, int64_t end) {
  const size_t N = hn::Lanes(d);
  const int a = f.alpha;
  const int64_t B = g.block, cp = g.c_blocks * B, tiles = g.tiles(), per_image = g.tiles_h * g.tiles_w;
  HWY_ALIGN float in[kMaxAlpha * kMaxAlpha * kMaxLanes], mid[kMaxAlpha * kMaxAlpha * kMaxLanes], out[kMaxAlpha * kMaxAlpha * kMaxLanes];
  for (int64_t t = begin; t < end; ++t) {
    const int64_t image = t / per_image, th = t % per_image / g.tiles_w, tw = t % g.tiles_w;
    const int64_t h0 = th * f.m - g.pad_top, w0 = tw * f.m - g.pad_left;
    for (int64_t cb = 0; cb < g.c_blocks; ++cb) {
      const float* plane = src + (image * g.c_blocks + cb) * g.h * g.w * B;
      for (int64_t l = 0; l < B; l += static_cast<int64_t>(N)) {
        for (int i = 0; i < a; ++i) {
          const int64_t row = h0 + i;
          for (int j = 0; j < a; ++j) {
            const int64_t col = w0 + j;
            const bool inside = row >= 0 && row < g.h && col >= 0 && col < g.w;
            hn::Store(inside ? hn::LoadU(d, plane + (row * g.w + col) * B + l) : hn::Zero(d), d, in + (i * a + j) * N);
          }
        }
        Transform2D(d, f.bt.data(), a, a, in, mid, out);
        for (int x = 0; x < a * a; ++x) hn::StoreU(hn::Load(d, out + x * N), d, v + (x * tiles + t) * cp + cb * B + l);
      }
    }
  }
}

template <class D>
void OutputTiles(D d, const WinogradMatrices& f, const WinogradGeometry& g, const float* products, const WinogradEpilogue& e, float* dst, int64_t begin,
                 int64_t end) {
  using Kind = WinogradEpilogueStep::Kind;
  const size_t N = hn::Lanes(d);
  const int a = f.alpha, m = f.m;
  const int64_t B = g.block, ocp = g.oc_blocks * B, tiles = g.tiles(), per_image = g.tiles_h * g.tiles_w;
  HWY_ALIGN float in[kMaxAlpha * kMaxAlpha * kMaxLanes], mid[kMaxAlpha * kMaxAlpha * kMaxLanes], out[kMaxAlpha * kMaxAlpha * kMaxLanes];
  for (int64_t t = begin; t < end; ++t) {
    const int64_t image = t / per_image, th = t % per_image / g.tiles_w, tw = t % g.tiles_w;
    const int64_t oh0 = th * m, ow0 = tw * m;
    for (int64_t ob = 0; ob < g.oc_blocks; ++ob)
      for (int64_t l = 0; l < B; l += static_cast<int64_t>(N)) {
        for (int x = 0; x < a * a; ++x) hn::Store(hn::LoadU(d, products + (x * tiles + t) * ocp + ob * B + l), d, in + x * N);
        Transform2D(d, f.at.data(), m, a, in, mid, out);
        const auto bias = e.bias ? hn::LoadU(d, e.bias + ob * B + l) : hn::Zero(d);
        const int64_t valid = e.channels - (ob * B + l);
        const auto lanes = hn::FirstN(d, static_cast<size_t>(valid <= 0 ? 0 : valid));
        const bool partial = valid < static_cast<int64_t>(N);
        for (int i = 0; i < m && oh0 + i < g.oh; ++i)
          for (int j = 0; j < m && ow0 + j < g.ow; ++j) {
            const int64_t at = (((image * g.oc_blocks + ob) * g.oh + oh0 + i) * g.ow + ow0 + j) * B + l;
            auto y = hn::Add(hn::Load(d, out + (i * m + j) * N), bias);
            for (const WinogradEpilogueStep& s : e.steps) switch (s.kind) {
                case Kind::kAddResidual: y = hn::Add(y, hn::LoadU(d, e.residual + at)); break;
                case Kind::kRelu: y = hn::Max(y, hn::Zero(d)); break;
                case Kind::kLeakyRelu: y = hn::IfThenElse(hn::Lt(y, hn::Zero(d)), hn::Mul(y, hn::Set(d, s.alpha)), y); break;
                case Kind::kClip: y = hn::Min(hn::Max(y, hn::Set(d, s.alpha)), hn::Set(d, s.beta)); break;
              }
            if (partial) y = hn::IfThenElseZero(lanes, y);
            hn::StoreU(y, d, dst + at);
          }
      }
  }
}

// Sixteen lanes where the block and the CPU allow, else eight (fewer on targets narrower than that).
void InputTransform(const WinogradMatrices& f, const WinogradGeometry& g, const float* src, float* v, int64_t begin, int64_t end) {
  if (g.block % 16 == 0 && hn::Lanes(hn::ScalableTag<float>()) >= 16) return InputTiles(hn::CappedTag<float, 16>(), f, g, src, v, begin, end);
  InputTiles(hn::CappedTag<float, 8>(), f, g, src, v, begin, end);
}

void OutputTransform(const WinogradMatrices& f, const WinogradGeometry& g, const float* products, const WinogradEpilogue& e, float* dst, int64_t begin,
                     int64_t end) {
  if (g.block % 16 == 0 && hn::Lanes(hn::ScalableTag<float>()) >= 16) return OutputTiles(hn::CappedTag<float, 16>(), f, g, products, e, dst, begin, end);
  OutputTiles(hn::CappedTag<float, 8>(), f, g, products, e, dst, begin, end);
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(InputTransform);
HWY_EXPORT(OutputTransform);

void WinogradInputTransform(const WinogradMatrices& f, const WinogradGeometry& g, const float* src, float* v, int64_t tile_begin, int64_t tile_end) {
  HWY_DYNAMIC_DISPATCH(InputTransform)(f, g, src, v, tile_begin, tile_end);
}

void WinogradOutputTransform(const WinogradMatrices& f, const WinogradGeometry& g, const float* products, const WinogradEpilogue& e, float* dst,
                             int64_t tile_begin, int64_t tile_end) {
  HWY_DYNAMIC_DISPATCH(OutputTransform)(f, g, products, e, dst, tile_begin, tile_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
