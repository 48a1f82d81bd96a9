#include "engine/backends/halide/huge_pages.h"

#include <doctest/doctest.h>

#include <cstdint>

namespace tilebank::engine {
namespace {

TEST_CASE("large allocations: huge-page aligned from 2 MiB, 64-byte aligned below, usable to the last byte") {
  for (size_t bytes : {size_t{8}, size_t{4096}, (size_t{2} << 20) - 1, size_t{2} << 20, (size_t{5} << 20) + 3}) {
    auto* p = static_cast<unsigned char*>(AllocateLarge(bytes));
    REQUIRE(p != nullptr);
    const uintptr_t align = bytes >= (size_t{2} << 20) ? (uintptr_t{2} << 20) : 64;
    CHECK(reinterpret_cast<uintptr_t>(p) % align == 0);
    p[0] = 1, p[bytes - 1] = 2;
    CHECK(p[0] + p[bytes - 1] == 3);
    FreeLarge(p);
  }
}

TEST_CASE("large allocations: a Halide buffer of the given extents, dense, innermost first") {
  Halide::Runtime::Buffer<float> b = LargeBuffer({1024, 768, 2});
  REQUIRE(b.dimensions() == 3);
  CHECK(b.dim(0).extent() == 1024);
  CHECK(b.dim(1).stride() == 1024);
  CHECK(b.dim(2).stride() == 1024 * 768);
  b.fill(1.5f);
  CHECK(b(1023, 767, 1) == 1.5f);
  CHECK(b.size_in_bytes() == size_t{1024} * 768 * 2 * sizeof(float));
}

}  // namespace
}  // namespace tilebank::engine
