// Winograd F(m, 3) convolution (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016): its matrices, built by Cook-Toom from interpolation points, and the tile
// transforms over channel-blocked activations ([N][C/B][H][W][B], B channels innermost),
// hand-written with Highway for the running CPU's best SIMD (chosen at run time).
//
// For a 3x3 filter g and an alpha x alpha input tile d (alpha = m + 2), the m x m output tile is
// Y = A^T [(G g G^T) . (B^T d B)] A, the product elementwise. Summed over input channels, the
// alpha^2 elementwise products become alpha^2 matrix products [tiles x C] x [C x OC].
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

// F(m, 3)'s matrices as constants, so that the transforms unroll with every zero left out. The
// points, in the order they are taken: the first m + 1 of these, and infinity.
inline constexpr double kWinogradPoints[] = {0, 1, -1, 2, -2, 0.5, -0.5};

template <int M>
struct WinogradTables {
  static constexpr int kAlpha = M + 2;
  std::array<float, M * kAlpha> at{};     // A^T
  std::array<float, kAlpha * 3> g{};      // G
  std::array<float, kAlpha * kAlpha> bt{};  // B^T
};

// The correlation F(m, r) is the transpose of the linear convolution of an m-term and an r-term
// polynomial, which Toom-Cook computes by evaluating both at the points p_j (and infinity: the
// leading coefficients), multiplying, and interpolating (Lagrange, its 1 / f_j moved into G).
template <int M>
constexpr WinogradTables<M> CookToom() {
  constexpr int n = M + 1, a = M + 2;
  const double* p = kWinogradPoints;
  WinogradTables<M> t;
  // B^T's row j: the coefficients, lowest first, of the product of (x - p_l) over l != j (every l
  // for the row of infinity, j = n).
  auto row_of_bt = [&](int j) {
    std::array<double, a> c{};
    c[0] = 1;
    int degree = 0;
    for (int l = 0; l < n; ++l) {
      if (l == j) continue;
      for (int k = degree + 1; k > 0; --k) c[k] = c[k - 1] - p[l] * c[k];
      c[0] = -p[l] * c[0];
      ++degree;
    }
    for (int k = 0; k < a; ++k) t.bt[j * a + k] = static_cast<float>(c[k]);
  };
  for (int j = 0; j < n; ++j) {
    double fj = 1;
    for (int l = 0; l < n; ++l)
      if (l != j) fj *= p[j] - p[l];
    double power = 1;
    for (int i = 0; i < M; ++i, power *= p[j]) t.at[i * a + j] = static_cast<float>(power);
    power = 1;
    for (int k = 0; k < 3; ++k, power *= p[j]) t.g[j * 3 + k] = static_cast<float>(power / fj);
    row_of_bt(j);
  }
  t.at[(M - 1) * a + n] = 1.f;
  t.g[n * 3 + 2] = 1.f;
  row_of_bt(n);
  return t;
}

template <int M>
inline constexpr WinogradTables<M> kWinogradTables = CookToom<M>();

// Whether F(m, 3) is built: m = 2 (points 0, 1, -1), 4 (and 2, -2) or 6 (and 1/2, -1/2), each with
// infinity. The functions below take only these.
bool WinogradTileKnown(int m);

// One convolution's tiles. The input is read at rows tile_row * m - pad_top + [0, alpha) and
// likewise columns; outside the image it reads zeros. A block of all the channels is NHWC.
struct WinogradGeometry {
  int m = 0;                                  // F(m, 3): m x m output tiles, (m + 2) x (m + 2) input tiles
  int64_t n = 0, c_blocks = 0, h = 0, w = 0;  // input [n][c_blocks][h][w][block]
  int64_t oc_blocks = 0, oh = 0, ow = 0;      // output [n][oc_blocks][oh][ow][out_block]
  int64_t pad_top = 0, pad_left = 0;
  int64_t block = 8, out_block = 8;           // multiples of 8
  int64_t tiles_h = 0, tiles_w = 0;           // ceil(oh / m), ceil(ow / m)
  int64_t tiles() const { return n * tiles_h * tiles_w; }
  int alpha() const { return m + 2; }
};
WinogradGeometry MakeWinogradGeometry(int m, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t pad_top,
                                      int64_t pad_left, int64_t block, int64_t out_block);

// The transformed weights: `weights` OIHW (oc x c x 3 x 3) -> u [alpha^2][c_pad][oc_pad] row-major,
// zero where a padded channel is.
std::vector<float> WinogradWeights(int m, const float* weights, int64_t oc, int64_t c, int64_t oc_pad, int64_t c_pad);

// Input transform of tiles [tile_begin, tile_end) (tile = (image, tile row, tile column), row-major):
// src -> v [alpha^2][tiles][c_blocks * block].
void WinogradInputTransform(const WinogradGeometry& g, const float* src, float* v, int64_t tile_begin, int64_t tile_end);

// Output transform of tiles [tile_begin, tile_end): products [alpha^2][tiles][oc_blocks * out_block] -> dst,
// with the epilogue. dst may be the residual (each value is read before it is written).
void WinogradOutputTransform(const WinogradGeometry& g, const float* products, const ConvEpilogue& e, float* dst, int64_t tile_begin,
                             int64_t tile_end);

}  // namespace tilebank::engine
