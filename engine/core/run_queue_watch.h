// Whether the machine let this process run while something was timed. A choice timed at bind
// (engine/backends/measured_choice_cache.h) on cores another process held, a build on both of
// them, can come out inverted several-fold, and a remembered choice outlives the moment: convnext's
// depthwise convolutions ran 3x slower for as long as such a choice stayed on disk. The watch reads
// the time this process's threads spent runnable but waiting for a CPU (Linux's run-queue delay,
// /proc/self/task/<tid>/schedstat) against the time they were runnable at all (waiting or on a
// CPU): a share, so that a many-core host's threads, each waking a few microseconds late, do not
// add up to a busy machine.
#pragma once
#include <map>

namespace tilebank::engine {

// A thread's time on a CPU and waiting on a run queue so far, in seconds.
struct ThreadSchedule {
  double on_cpu_s = 0, waiting_s = 0;
};
// Each live thread's, by thread id; empty where schedstat cannot be read.
std::map<long, ThreadSchedule> ThreadSchedules();

class RunQueueWatch {
 public:
  // The waiting a timing may see and still be kept: a tenth of the threads' runnable time.
  static constexpr double kBusyShare = 0.1;

  RunQueueWatch();
  // Of the time the process's live threads were runnable since the watch began (those started
  // since counted whole, those ended since not at all), the share spent waiting for a CPU; 0 where
  // schedstat cannot be read or nothing ran.
  double WaitedShare() const;
  // The waiting at most kBusyShare: what was timed ran on a machine that let it.
  bool Quiet() const { return WaitedShare() <= kBusyShare; }

 private:
  std::map<long, ThreadSchedule> at_start_;  // by thread id
};

}  // namespace tilebank::engine
