// Whether the machine let this process run while something was timed. A choice timed at bind
// (engine/backends/measured_choice_cache.h) on cores another process held, a build on both of
// them, can come out inverted several-fold, and a remembered choice outlives the moment: convnext's
// depthwise convolutions ran 3x slower for as long as such a choice stayed on disk. The watch reads
// the time this process's threads spent runnable but waiting for a CPU (Linux's run-queue delay,
// /proc/self/task/<tid>/schedstat) against the wall time since it began.
#pragma once
#include <chrono>
#include <map>

namespace tilebank::engine {

class RunQueueWatch {
 public:
  // The waiting a timing may see and still be kept: a tenth of its wall time, summed over threads.
  static constexpr double kBusyShare = 0.1;

  RunQueueWatch();
  // Seconds of waiting summed over the process's live threads (those started since counted whole,
  // those ended since not at all), per second of wall time since the watch began; 0 where
  // schedstat cannot be read.
  double WaitedShare() const;
  // The waiting at most kBusyShare: what was timed ran on a machine that let it.
  bool Quiet() const { return WaitedShare() <= kBusyShare; }

 private:
  std::chrono::steady_clock::time_point start_;
  std::map<long, double> waited_at_start_;  // thread id -> seconds waited
};

// Each live thread's run-queue delay in seconds, by thread id; empty where schedstat cannot be read.
std::map<long, double> ThreadRunQueueDelays();

}  // namespace tilebank::engine
