// The Cook-Toom matrices compute a 1-D correlation exactly (up to rounding) for every tile size,
// and the weight transform lays out G g G^T per (position, input channel, output channel).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/simd/winograd_transforms.h"

namespace tilebank::engine {
namespace {

template <int M>
void CheckCorrelation() {
  CAPTURE(M);
  const WinogradTables<M>& f = kWinogradTables<M>;
  constexpr int a = WinogradTables<M>::kAlpha;
  REQUIRE(a == M + 2);
  std::vector<double> d(a), g = {0.7, -1.3, 0.4};
  for (int i = 0; i < a; ++i) d[i] = std::sin(1.7 * i + 0.3);
  std::vector<double> gg(a, 0), bd(a, 0);
  for (int j = 0; j < a; ++j) {
    for (int k = 0; k < 3; ++k) gg[j] += f.g[j * 3 + k] * g[k];
    for (int t = 0; t < a; ++t) bd[j] += f.bt[j * a + t] * d[t];
  }
  for (int i = 0; i < M; ++i) {
    double y = 0, want = 0;
    for (int j = 0; j < a; ++j) y += f.at[i * a + j] * gg[j] * bd[j];
    for (int k = 0; k < 3; ++k) want += g[k] * d[i + k];
    CHECK(std::fabs(y - want) < 1e-4);
  }
}

TEST_CASE("Winograd tables: A^T [(G g) . (B^T d)] is the correlation of d with g for m = 2, 4, 6, the only tiles built") {
  CheckCorrelation<2>();
  CheckCorrelation<4>();
  CheckCorrelation<6>();
  CHECK(WinogradTileKnown(2));
  CHECK(WinogradTileKnown(4));
  CHECK(WinogradTileKnown(6));
  CHECK_FALSE(WinogradTileKnown(3));
}

TEST_CASE("WinogradWeights: zero for the padded channels, G g G^T elsewhere") {
  std::vector<float> w(2 * 3 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3.f;
  const std::vector<float> u = WinogradWeights(2, w.data(), 2, 3, 8, 8);
  REQUIRE(u.size() == 16u * 8 * 8);
  // Position (0, 0) of F(2,3) with point 0 is g[0][0] / f_0^2 (f_0 = (0 - 1)(0 + 1) = -1).
  CHECK(u[(0 * 8 + 1) * 8 + 1] == doctest::Approx(w[(1 * 3 + 1) * 9]));
  for (int x = 0; x < 16; ++x)
    for (int c = 0; c < 8; ++c)
      for (int o = 0; o < 8; ++o)
        if (c >= 3 || o >= 2) CHECK(u[(x * 8 + c) * 8 + o] == 0.f);
}

}  // namespace
}  // namespace tilebank::engine
