#include "engine/core/heap_blocks.h"

#include <malloc.h>

#include <atomic>

namespace tilebank::engine {
namespace {

std::atomic<bool> huge_pages{false};

}  // namespace

void SetMallocUsesHugePages(bool huge) { huge_pages = huge; }
bool MallocUsesHugePages() { return huge_pages; }

void PrepareHeapForLoading() {
  if (!MallocUsesHugePages()) KeepLargeBlocksInTheHeap();
}

void ReturnFreeHeapPages() { malloc_trim(0); }

void KeepLargeBlocksInTheHeap() {
  static const bool set = [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)set;
}

}  // namespace tilebank::engine
