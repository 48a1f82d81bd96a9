#include "engine/backends/onednn/call_scratch.h"

#include <cstdint>
#include <vector>

namespace tilebank::engine {

std::byte* CallScratch(size_t bytes) {
  thread_local std::vector<std::byte> room;
  if (room.size() < bytes + kCallScratchAlign) {  // made afresh at the size asked: resize() would double it and copy
    std::vector<std::byte>().swap(room);
    room.resize(bytes + kCallScratchAlign);
  }
  const auto address = reinterpret_cast<uintptr_t>(room.data());
  return room.data() + (kCallScratchAlign - address % kCallScratchAlign) % kCallScratchAlign;
}

void PlaceInCallScratch(dnnl::memory* first, dnnl::memory* second) {
  if (!first && !second) return;
  const size_t first_bytes = first ? (first->get_desc().get_size() + kCallScratchAlign - 1) / kCallScratchAlign * kCallScratchAlign : 0;
  std::byte* room = CallScratch(first_bytes + (second ? second->get_desc().get_size() : 0));
  if (first) first->set_data_handle(room);
  if (second) second->set_data_handle(room + first_bytes);
}

}  // namespace tilebank::engine
