#include "engine/backends/onednn/call_scratch.h"

#include <cstdint>
#include <vector>

namespace tilebank::engine {

std::byte* CallScratch(size_t bytes) {
  thread_local std::vector<std::byte> room;
  if (room.size() < bytes + kCallScratchAlign) room.resize(bytes + kCallScratchAlign);
  const auto address = reinterpret_cast<uintptr_t>(room.data());
  return room.data() + (kCallScratchAlign - address % kCallScratchAlign) % kCallScratchAlign;
}

}  // namespace tilebank::engine
