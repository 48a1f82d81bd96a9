// Where a product's row-major weights are placed (gemm_weights_placement.h): the values copied,
// the address a 64-byte boundary or 16 bytes past one as the choice says, the same choice on the
// next placement of that shape (remembered), for B read as it is and transposed.
#include "engine/backends/onednn/gemm_weights_placement.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tilebank::engine {
namespace {

TEST_CASE("a product's weights are placed aligned or 16 bytes past a boundary, the faster, and the choice kept") {
  for (bool trans_b : {false, true}) {
    CAPTURE(trans_b);
    const int64_t M = 8, K = 48, N = 40;
    std::vector<float> w(static_cast<size_t>(K * N));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 97) * 0.5f - 3.f;
    auto fill = [&](float* to) { std::copy(w.begin(), w.end(), to); };
    const PlacedGemmWeights first = PlacedGemmWeights::Place(fill, M, K, N, trans_b);
    REQUIRE(first.data() != nullptr);
    CHECK(first.data() != w.data());
    CHECK(std::vector<float>(first.data(), first.data() + w.size()) == w);
    CHECK(reinterpret_cast<uintptr_t>(first.data()) % 64 == (first.past_alignment() ? 16u : 0u));
    const PlacedGemmWeights again = PlacedGemmWeights::Place(fill, M, K, N, trans_b);
    CHECK(again.past_alignment() == first.past_alignment());
    CHECK(again.data() != first.data());
    CHECK(std::vector<float>(again.data(), again.data() + w.size()) == w);
  }
}

}  // namespace
}  // namespace tilebank::engine
