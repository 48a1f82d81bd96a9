// Winograd F(m, 3)'s tile geometry and weight transform: the scalar half of
// engine/backends/simd/winograd_transforms.h (run once per convolution, at load).

#include <cstddef>

#include "engine/backends/simd/winograd_transforms.h"

namespace tilebank::engine {

bool WinogradTileKnown(int m) { return m == 2 || m == 4 || m == 6; }

WinogradGeometry MakeWinogradGeometry(int m, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t pad_top,
                                      int64_t pad_left, int64_t block, int64_t out_block) {
  WinogradGeometry g;
  g.m = m, g.n = n, g.h = h, g.w = w, g.oh = oh, g.ow = ow, g.pad_top = pad_top, g.pad_left = pad_left, g.block = block, g.out_block = out_block;
  g.c_blocks = (c + block - 1) / block;
  g.oc_blocks = (oc + out_block - 1) / out_block;
  g.tiles_h = (oh + m - 1) / m;
  g.tiles_w = (ow + m - 1) / m;
  return g;
}

namespace {

template <int M>
std::vector<float> WeightsOf(const float* weights, int64_t oc, int64_t c, int64_t oc_pad, int64_t c_pad) {
  constexpr int a = WinogradTables<M>::kAlpha;
  const auto& g = kWinogradTables<M>.g;
  std::vector<float> u(static_cast<size_t>(a) * a * c_pad * oc_pad, 0.f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float* k = weights + (o * c + i) * 9;
      double gk[a * 3];  // G k: alpha x 3
      for (int x = 0; x < a; ++x)
        for (int col = 0; col < 3; ++col) {
          double s = 0;
          for (int t = 0; t < 3; ++t) s += static_cast<double>(g[x * 3 + t]) * k[t * 3 + col];
          gk[x * 3 + col] = s;
        }
      for (int x = 0; x < a; ++x)
        for (int y = 0; y < a; ++y) {  // (G k G^T)[x][y]
          double s = 0;
          for (int t = 0; t < 3; ++t) s += gk[x * 3 + t] * g[y * 3 + t];
          u[((static_cast<size_t>(x) * a + y) * c_pad + i) * oc_pad + o] = static_cast<float>(s);
        }
    }
  return u;
}

}  // namespace

std::vector<float> WinogradWeights(int m, const float* weights, int64_t oc, int64_t c, int64_t oc_pad, int64_t c_pad) {
  switch (m) {
    case 2: return WeightsOf<2>(weights, oc, c, oc_pad, c_pad);
    case 4: return WeightsOf<4>(weights, oc, c, oc_pad, c_pad);
    default: return WeightsOf<6>(weights, oc, c, oc_pad, c_pad);
  }
}

}  // namespace tilebank::engine
