#include "engine/core/zeroed_pages.h"

#include <sys/mman.h>

#include <utility>

namespace tilebank::engine {

ZeroedPages::ZeroedPages(size_t bytes) : bytes_(bytes == 0 ? 1 : bytes) {
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) bytes_ = 0;
  else data_ = p;
}

ZeroedPages::~ZeroedPages() {
  if (data_) munmap(data_, bytes_);
}

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace tilebank::engine
