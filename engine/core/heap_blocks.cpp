#include "engine/core/heap_blocks.h"

#include <malloc.h>

namespace tilebank::engine {

void KeepLargeBlocksInTheHeap() {
  static const bool set = [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)set;
}

}  // namespace tilebank::engine
