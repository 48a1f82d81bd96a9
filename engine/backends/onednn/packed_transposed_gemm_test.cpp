#include "engine/backends/onednn/packed_transposed_gemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace tilebank::engine {
namespace {

TEST_CASE("PackedTransposedGemm: Z = W^T X for the weights packed once, run after run") {
  struct Case {
    int64_t C, rows, positions;
  };
  // DCGAN's layers in small, a single position, one input channel, odd counts.
  for (const Case& c : {Case{64, 48, 1024}, Case{32, 256, 16}, Case{5, 7, 1}, Case{1, 9, 13}, Case{17, 33, 29}}) {
    CAPTURE(c.C);
    CAPTURE(c.rows);
    CAPTURE(c.positions);
    std::vector<float> w(static_cast<size_t>(c.C * c.rows)), x(static_cast<size_t>(c.C * c.positions));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.29f * i);
    auto made = PackedTransposedGemm::Make(c.C, c.rows, c.positions, w.data());
    REQUIRE(made.ok());
    const std::vector<float> kept = w;
    std::fill(w.begin(), w.end(), 0.0f);  // packed: the caller's copy is no longer read
    for (int run = 0; run < 2; ++run) {
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.13f * i + run);
      std::vector<float> z(static_cast<size_t>(c.rows * c.positions), -1.0f), scratch(z.size(), 7.0f);  // a new scratch each run: nothing kept in it
      (*made)->Run(x.data(), z.data(), scratch.data());
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t p = 0; p < c.positions; ++p) {
          double want = 0;
          for (int64_t k = 0; k < c.C; ++k) want += double(kept[k * c.rows + r]) * x[k * c.positions + p];
          REQUIRE(z[r * c.positions + p] == doctest::Approx(want).epsilon(1e-4).scale(c.C));
        }
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
