// The run-queue watch sees this process's threads wait when there are more of them runnable than
// cores. (That an idle machine reads quiet is not tested: CTest runs other tests beside this one.)
#include "engine/core/run_queue_watch.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tilebank::engine {
namespace {

TEST_CASE("run-queue watch: threads beyond the cores wait most of their runnable time") {
  if (ThreadSchedules().empty()) {
    MESSAGE("no /proc/self/task/*/schedstat here: the watch reads 0");
    CHECK(RunQueueWatch().WaitedShare() == 0);
    return;
  }
  {  // a share, whatever else the machine runs (CTest runs other tests beside this one)
    RunQueueWatch watch;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(watch.WaitedShare() >= 0);
    CHECK(watch.WaitedShare() <= 1);
  }
  // Three spinning threads per core for 300 ms: each waits about two thirds of its runnable time.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  RunQueueWatch watch;
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < 3 * cores; ++i)
    spinners.emplace_back([&stop] {
      volatile unsigned long long n = 0;
      while (!stop.load(std::memory_order_relaxed)) n = n + 1;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double share = watch.WaitedShare();
  const bool quiet = watch.Quiet();
  stop = true;
  for (auto& t : spinners) t.join();  // read before: an ended thread's waiting is no longer counted
  CHECK_MESSAGE(share > 0.4, share);
  CHECK_FALSE(quiet);
}

}  // namespace
}  // namespace tilebank::engine
