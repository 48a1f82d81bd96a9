#include "engine/runtime/kernel_prefetch.h"

#include <algorithm>
#include <exception>

#include "engine/core/threads.h"

namespace tilebank::engine::model {

KernelPrefetch::~KernelPrefetch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Job& job : jobs_)
      if (job.state == State::kPending) job.state = State::kCancelled;
  }
  advanced_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void KernelPrefetch::Add(std::string key, std::vector<int> nodes, Build build) {
  for (int n : nodes) job_of_node_[n] = jobs_.size();
  job_of_key_[key] = jobs_.size();
  jobs_.push_back(Job{std::move(key), std::move(build)});
}

void KernelPrefetch::Start(int library_threads, bool wait_for_pending) {
  wait_for_pending_ = wait_for_pending;
  if (jobs_.size() < (wait_for_pending ? 1u : 2u)) return;
  worker_ = std::thread([this, library_threads] {
    UseLibraryThreadsHere(library_threads);
    Work();
  });
}

void KernelPrefetch::Work() {
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        // The first pending job of those it builds: every other one (the binder builds the rest as it
        // reaches them, so that neither waits for the other), or all of them for wait_for_pending_.
        size_t next = wait_for_pending_ ? 0 : 1;
        while (next < jobs_.size() && jobs_[next].state != State::kPending) next += wait_for_pending_ ? 1 : 2;
        if (next >= jobs_.size()) return;  // the binder has reached (or passed) every job left
        if (next < settled_ + kLookahead || wait_for_pending_) {
          job = &jobs_[next];
          break;
        }
        advanced_.wait(lock);
      }
      job->state = State::kRunning;
    }
    std::unique_ptr<Kernel> kernel;
    try {
      if (auto built = job->build(); built.ok()) kernel = std::move(built.value());
    } catch (const std::exception&) {  // the binder builds it again and reports what fails
    }
    std::lock_guard<std::mutex> lock(mutex_);
    job->kernel = std::move(kernel);
    job->state = State::kDone;
    done_.notify_all();
  }
}

void KernelPrefetch::Settle(int node) {
  auto it = job_of_node_.find(node);
  if (it == job_of_node_.end()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  Job& job = jobs_[it->second];
  settled_ = std::max(settled_, it->second + 1);
  advanced_.notify_all();
  if (job.state == State::kPending && !wait_for_pending_) job.state = State::kCancelled;
  done_.wait(lock, [&] { return job.state != State::kRunning && job.state != State::kPending; });
}

std::unique_ptr<Kernel> KernelPrefetch::Take(const std::string& key) {
  auto it = job_of_key_.find(key);
  if (it == job_of_key_.end()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  Job& job = jobs_[it->second];
  if (job.state != State::kDone || !job.kernel) return nullptr;
  ++taken_;
  return std::move(job.kernel);
}

}  // namespace tilebank::engine::model
