// Zero-filled memory straight from the kernel, for a model's activation arena: anonymous pages,
// zero until written, each faulted in by the first run as it writes it rather than at load by a
// memset (calloc clears the memory it recycles from the heap, touching every page): ESPCN's 40 MiB
// arena took 55 ms of a 100 ms load that way.
#pragma once
#include <cstddef>

namespace tilebank::engine {

class ZeroedPages {
 public:
  ZeroedPages() = default;
  // At least `bytes` (one page when 0), page-aligned; data() is null when the kernel refuses them.
  explicit ZeroedPages(size_t bytes);
  ~ZeroedPages();
  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;

  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tilebank::engine
