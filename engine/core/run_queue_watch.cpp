#include "engine/core/run_queue_watch.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace tilebank::engine {

std::map<long, ThreadSchedule> ThreadSchedules() {
  std::map<long, ThreadSchedule> threads;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    // schedstat: time on the CPU, time waiting on a run queue (both ns), timeslices run.
    std::ifstream in(it->path() / "schedstat");
    unsigned long long on_cpu = 0, waiting = 0;
    if (!(in >> on_cpu >> waiting)) continue;  // the thread ended, or no schedstat
    try {
      threads[std::stol(it->path().filename().string())] = {static_cast<double>(on_cpu) * 1e-9, static_cast<double>(waiting) * 1e-9};
    } catch (const std::exception&) {
    }
  }
  return threads;
}

RunQueueWatch::RunQueueWatch() : at_start_(ThreadSchedules()) {}

double RunQueueWatch::WaitedShare() const {
  double ran = 0, waited = 0;
  for (const auto& [tid, now] : ThreadSchedules()) {
    const auto before = at_start_.find(tid);
    const ThreadSchedule start = before == at_start_.end() ? ThreadSchedule{} : before->second;
    ran += now.on_cpu_s - start.on_cpu_s;
    waited += now.waiting_s - start.waiting_s;
  }
  return ran + waited > 0 && waited > 0 ? waited / (ran + waited) : 0;
}

}  // namespace tilebank::engine
