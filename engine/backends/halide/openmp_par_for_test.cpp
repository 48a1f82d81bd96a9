#include "engine/backends/halide/openmp_par_for.h"

#include <doctest/doctest.h>

#include <atomic>
#include <vector>

#include "engine/core/parallel_for.h"
#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

struct Closure {
  std::vector<std::atomic<int>> calls;
  int fail_at = -1;
  explicit Closure(int n) : calls(n) {}
};

int CountCall(void*, int i, uint8_t* closure) {
  auto* c = reinterpret_cast<Closure*>(closure);
  c->calls[i - 10].fetch_add(1);
  return i == c->fail_at ? 7 : 0;
}

TEST_CASE("OpenMpDoParFor: each task once, on one or two threads, and a failing task's result comes back") {
  const int before = LibraryThreadsHere();
  for (int threads : {1, 2}) {
    UseLibraryThreadsHere(threads);
    for (int size : {0, 1, 5, 64}) {
      CAPTURE(threads);
      CAPTURE(size);
      Closure c(size);
      CHECK(OpenMpDoParFor(nullptr, CountCall, 10, size, reinterpret_cast<uint8_t*>(&c)) == 0);
      for (int i = 0; i < size; ++i) CHECK(c.calls[i].load() == 1);
    }
    Closure failing(20);
    failing.fail_at = 23;
    CHECK(OpenMpDoParFor(nullptr, CountCall, 10, 20, reinterpret_cast<uint8_t*>(&failing)) == 7);
    for (int i = 0; i < 20; ++i) CHECK(failing.calls[i].load() == 1);
  }
  UseLibraryThreadsHere(before);
}

TEST_CASE("RunParallelTasks: inside a parallel loop of its own threads, serially and whole") {
  const int before = LibraryThreadsHere();
  UseLibraryThreadsHere(2);
  std::atomic<int> total{0};
  const bool two = RunOnTwoThreads([&](int) {
    CHECK(RunParallelTasks(0, 100, [&](int i) {
            total += i;
            return 0;
          }) == 0);
  });
  CHECK(total.load() == (two ? 2 : 0) * 4950);
  UseLibraryThreadsHere(before);
}

}  // namespace
}  // namespace tilebank::engine
