#include "engine/core/run_queue_watch.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace tilebank::engine {

std::map<long, double> ThreadRunQueueDelays() {
  std::map<long, double> delays;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    // schedstat: time on the CPU, time waiting on a run queue (both ns), timeslices run.
    std::ifstream in(it->path() / "schedstat");
    unsigned long long on_cpu = 0, waiting = 0;
    if (!(in >> on_cpu >> waiting)) continue;  // the thread ended, or no schedstat
    try {
      delays[std::stol(it->path().filename().string())] = static_cast<double>(waiting) * 1e-9;
    } catch (const std::exception&) {
    }
  }
  return delays;
}

RunQueueWatch::RunQueueWatch() : start_(std::chrono::steady_clock::now()), waited_at_start_(ThreadRunQueueDelays()) {}

double RunQueueWatch::WaitedShare() const {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (wall <= 0) return 0;
  double waited = 0;
  for (const auto& [tid, seconds] : ThreadRunQueueDelays()) {
    const auto before = waited_at_start_.find(tid);
    waited += seconds - (before == waited_at_start_.end() ? 0.0 : before->second);
  }
  return waited > 0 ? waited / wall : 0;
}

}  // namespace tilebank::engine
