// Memory for large kernel buffers, backed by transparent huge pages where the kernel allows it
// (Linux THP in "madvise" mode, Debian's default). A 64 MiB operand in 4 KiB pages costs a TLB
// miss every 4 KiB, and on a virtual machine each miss is a two-level page walk; streaming
// kernels (elementwise, Softmax, LayerNorm) lose bandwidth to it. Deployed frameworks advise
// huge pages for large tensors for the same reason, so kernels are measured that way.
#pragma once
#include <Halide.h>

#include <cstddef>
#include <vector>

namespace tilebank::engine {

// At least `bytes`, 64-byte aligned; blocks of 2 MiB and more are 2 MiB aligned and advised
// MADV_HUGEPAGE. Release with FreeLarge. Returns nullptr when out of memory.
void* AllocateLarge(size_t bytes);
void FreeLarge(void* p);

// A dense float buffer of these extents (innermost first) allocated by AllocateLarge.
Halide::Runtime::Buffer<float> LargeBuffer(const std::vector<int>& extents);

}  // namespace tilebank::engine
