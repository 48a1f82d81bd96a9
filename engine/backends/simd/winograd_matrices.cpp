// Winograd F(m, 3)'s matrices as vectors, the tile geometry and the weight transform: the scalar
// half of engine/backends/simd/winograd_transforms.h (run once per convolution, at load).
#include <array>

#include "engine/backends/simd/winograd_transforms.h"

namespace tilebank::engine {

namespace {

template <int M>
WinogradMatrices MatricesOf() {
  const WinogradTables<M>& t = kWinogradTables<M>;
  return {M, WinogradTables<M>::kAlpha, {t.at.begin(), t.at.end()}, {t.g.begin(), t.g.end()}, {t.bt.begin(), t.bt.end()}};
}

}  // namespace

const WinogradMatrices* WinogradF(int m) {
  static const std::array<WinogradMatrices, 3> known = {MatricesOf<2>(), MatricesOf<4>(), MatricesOf<6>()};
  for (const WinogradMatrices& f : known)
    if (f.m == m) return &f;
  return nullptr;
}

WinogradGeometry MakeWinogradGeometry(int m, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t pad_top,
                                      int64_t pad_left, int64_t block, int64_t out_block) {
  WinogradGeometry g;
  g.n = n, g.h = h, g.w = w, g.oh = oh, g.ow = ow, g.pad_top = pad_top, g.pad_left = pad_left, g.block = block, g.out_block = out_block;
  g.c_blocks = (c + block - 1) / block;
  g.oc_blocks = (oc + out_block - 1) / out_block;
  g.tiles_h = (oh + m - 1) / m;
  g.tiles_w = (ow + m - 1) / m;
  return g;
}

std::vector<float> WinogradWeights(const WinogradMatrices& f, const float* weights, int64_t oc, int64_t c, int64_t oc_pad, int64_t c_pad) {
  const int a = f.alpha;
  std::vector<float> u(static_cast<size_t>(a) * a * c_pad * oc_pad, 0.f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float* k = weights + (o * c + i) * 9;
      double gk[16 * 3];  // G k: alpha x 3
      for (int x = 0; x < a; ++x)
        for (int col = 0; col < 3; ++col) {
          double s = 0;
          for (int t = 0; t < 3; ++t) s += static_cast<double>(f.g[x * 3 + t]) * k[t * 3 + col];
          gk[x * 3 + col] = s;
        }
      for (int x = 0; x < a; ++x)
        for (int y = 0; y < a; ++y) {  // (G k G^T)[x][y]
          double s = 0;
          for (int t = 0; t < 3; ++t) s += gk[x * 3 + t] * f.g[y * 3 + t];
          u[((static_cast<size_t>(x) * a + y) * c_pad + i) * oc_pad + o] = static_cast<float>(s);
        }
    }
  return u;
}

}  // namespace tilebank::engine
