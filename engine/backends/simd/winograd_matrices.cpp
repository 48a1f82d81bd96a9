// Winograd F(m, 3)'s matrices by Cook-Toom, the tile geometry and the weight transform: the scalar
// half of engine/backends/simd/winograd_transforms.h (run once per convolution, at load).
#include <array>
#include <memory>

#include "engine/backends/simd/winograd_transforms.h"

namespace tilebank::engine {

namespace {

// The correlation F(m, r) is the transpose of the linear convolution of an m-term and an r-term
// polynomial, which Toom-Cook computes by evaluating both at the points p_j (and infinity: the
// leading coefficients), multiplying, and interpolating (Lagrange, its 1 / f_j moved into G).
WinogradMatrices CookToom(int m, const std::vector<double>& points) {
  const int r = 3, n = static_cast<int>(points.size()), alpha = n + 1;
  WinogradMatrices f;
  f.m = m;
  f.alpha = alpha;
  f.at.assign(static_cast<size_t>(m) * alpha, 0.f);
  f.g.assign(static_cast<size_t>(alpha) * r, 0.f);
  f.bt.assign(static_cast<size_t>(alpha) * alpha, 0.f);
  auto power = [](double x, int k) {
    double v = 1;
    while (k-- > 0) v *= x;
    return v;
  };
  // Coefficients, lowest first, of the product of (x - p_l) over l in `roots`.
  auto monic = [&](int skip) {
    std::vector<double> c = {1.0};
    for (int l = 0; l < n; ++l) {
      if (l == skip) continue;
      std::vector<double> next(c.size() + 1, 0.0);
      for (size_t t = 0; t < c.size(); ++t) next[t + 1] += c[t], next[t] -= points[l] * c[t];
      c = next;
    }
    return c;
  };
  for (int j = 0; j < n; ++j) {
    double fj = 1;
    for (int l = 0; l < n; ++l)
      if (l != j) fj *= points[j] - points[l];
    for (int i = 0; i < m; ++i) f.at[i * alpha + j] = static_cast<float>(power(points[j], i));
    for (int k = 0; k < r; ++k) f.g[j * r + k] = static_cast<float>(power(points[j], k) / fj);
    const std::vector<double> c = monic(j);
    for (size_t t = 0; t < c.size(); ++t) f.bt[j * alpha + t] = static_cast<float>(c[t]);
  }
  f.at[(m - 1) * alpha + n] = 1.f;
  f.g[n * r + r - 1] = 1.f;
  const std::vector<double> c = monic(-1);
  for (size_t t = 0; t < c.size(); ++t) f.bt[n * alpha + t] = static_cast<float>(c[t]);
  return f;
}

}  // namespace

const WinogradMatrices* WinogradF(int m) {
  static const std::array<WinogradMatrices, 3> known = {CookToom(2, {0, 1, -1}), CookToom(4, {0, 1, -1, 2, -2}),
                                                        CookToom(6, {0, 1, -1, 2, -2, 0.5, -0.5})};
  for (const WinogradMatrices& f : known)
    if (f.m == m) return &f;
  return nullptr;
}

WinogradGeometry MakeWinogradGeometry(int m, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t pad_top,
                                      int64_t pad_left, int64_t block) {
  WinogradGeometry g;
  g.n = n, g.h = h, g.w = w, g.oh = oh, g.ow = ow, g.pad_top = pad_top, g.pad_left = pad_left, g.block = block;
  g.c_blocks = (c + block - 1) / block;
  g.oc_blocks = (oc + block - 1) / block;
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
