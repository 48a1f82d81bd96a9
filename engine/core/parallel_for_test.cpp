// ParallelFor covers its range once, on the OpenMP threads it is given, and runs serially inside
// one of its own chunks.
#include "engine/core/parallel_for.h"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

TEST_CASE("ParallelFor: every index once, in chunks on distinct threads, nested calls serial") {
  const int before = ParallelThreads();
  SetLibraryThreads(2);
  for (int64_t n : {1, 2, 7, 1000}) {
    CAPTURE(n);
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    std::mutex m;
    std::set<std::thread::id> threads;
    int chunks = 0, empty_chunks = 0;
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) seen[i]++;
      std::lock_guard<std::mutex> lock(m);
      threads.insert(std::this_thread::get_id());
      ++chunks;
      empty_chunks += begin >= end;
    });
    CHECK(empty_chunks == 0);
    for (auto& s : seen) CHECK(s.load() == 1);
    CHECK(chunks == std::min<int64_t>(n, ParallelThreads()));
    CHECK(threads.size() == static_cast<size_t>(chunks));
  }
  // A grain larger than the range: one call on this thread.
  std::vector<std::pair<int64_t, int64_t>> calls;
  ParallelFor(100, 1000, [&](int64_t begin, int64_t end) { calls.emplace_back(begin, end); });
  CHECK(calls == std::vector<std::pair<int64_t, int64_t>>{{0, 100}});
  // Inside a chunk, a nested ParallelFor runs serially: one call over its whole range.
  std::atomic<int> inner_calls{0}, whole_ranges{0};
  ParallelFor(2, 1, [&](int64_t, int64_t) {
    ParallelFor(10, 1, [&](int64_t b, int64_t e) {
      inner_calls++;
      whole_ranges += b == 0 && e == 10;
    });
  });
  CHECK(inner_calls.load() == std::min(2, ParallelThreads()));
  CHECK(whole_ranges.load() == inner_calls.load());
  SetLibraryThreads(before);
}

}  // namespace
}  // namespace tilebank::engine
