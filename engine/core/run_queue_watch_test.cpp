// The run-queue watch sees this process's threads wait when there are more of them runnable than
// cores, and sees no waiting over a sleep.
#include "engine/core/run_queue_watch.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tilebank::engine {
namespace {

TEST_CASE("run-queue watch: threads beyond the cores wait, a sleep waits for nothing") {
  if (ThreadRunQueueDelays().empty()) {
    MESSAGE("no /proc/self/task/*/schedstat here: the watch reads 0");
    CHECK(RunQueueWatch().WaitedShare() == 0);
    return;
  }
  {
    RunQueueWatch watch;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_MESSAGE(watch.WaitedShare() < RunQueueWatch::kBusyShare, watch.WaitedShare());
  }
  // Three spinning threads per core for 300 ms: together they wait about twice the wall time.
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
  CHECK_MESSAGE(share > 1.0, share);
  CHECK_FALSE(quiet);
}

}  // namespace
}  // namespace tilebank::engine
