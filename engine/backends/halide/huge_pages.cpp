#include "engine/backends/halide/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>

namespace tilebank::engine {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

void* AllocateLarge(size_t bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p && align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  return p;
}

void FreeLarge(void* p) { std::free(p); }

Halide::Runtime::Buffer<float> LargeBuffer(const std::vector<int>& extents) {
  Halide::Runtime::Buffer<float> b(nullptr, extents);
  b.allocate(AllocateLarge, FreeLarge);
  return b;
}

}  // namespace tilebank::engine
