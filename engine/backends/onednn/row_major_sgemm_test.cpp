#include "engine/backends/onednn/row_major_sgemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

// C = A op(B) by plain loops, A [M,K], B [K,N] or, transposed, [N,K].
std::vector<float> Naive(int64_t M, int64_t N, int64_t K, const std::vector<float>& a, const std::vector<float>& b, bool tb) {
  std::vector<float> c(static_cast<size_t>(M * N), 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(a[m * K + k]) * b[tb ? n * K + k : k * N + n];
      c[m * N + n] = static_cast<float>(acc);
    }
  return c;
}

TEST_CASE("RowMajorSgemm: products on either side of the serial size, and the thread count kept") {
  const int before = LibraryThreadsHere();
  UseLibraryThreadsHere(2);
  struct Case {
    int64_t M, N, K;
    bool tb;
  };
  for (const Case& c : {Case{1, 256, 256, true}, Case{3, 17, 5, false}, Case{64, 96, 80, true}, Case{2, 512, 512, false}}) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    std::vector<float> a(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N)), y(static_cast<size_t>(c.M * c.N), 7.0f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11f * i);
    RowMajorSgemm('N', c.tb ? 'T' : 'N', c.M, c.N, c.K, 1.0f, a.data(), c.K, b.data(), c.tb ? c.K : c.N, 0.0f, y.data(), c.N);
    const std::vector<float> want = Naive(c.M, c.N, c.K, a, b, c.tb);
    for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(c.K));
    CHECK(LibraryThreadsHere() == 2);
  }
  UseLibraryThreadsHere(before);
}

TEST_CASE("SerialLibraryScope: one thread inside, the count before it after, and nothing when not serial") {
  const int before = LibraryThreadsHere();
  UseLibraryThreadsHere(2);
  {
    const SerialLibraryScope serial(true);
    CHECK(LibraryThreadsHere() == 1);
  }
  CHECK(LibraryThreadsHere() == 2);
  {
    const SerialLibraryScope not_serial(false);
    CHECK(LibraryThreadsHere() == 2);
  }
  UseLibraryThreadsHere(before);
}

}  // namespace
}  // namespace tilebank::engine
