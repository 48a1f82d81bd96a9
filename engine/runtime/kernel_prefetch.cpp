#include "engine/runtime/kernel_prefetch.h"

#include <exception>

#include "engine/core/threads.h"

namespace tilebank::engine::model {

KernelPrefetch::~KernelPrefetch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Job& job : jobs_)
      if (job.state == State::kPending) job.state = State::kCancelled;
  }
  if (worker_.joinable()) worker_.join();
}

void KernelPrefetch::Add(std::string key, std::vector<int> nodes, Build build) {
  for (int n : nodes) job_of_node_[n] = jobs_.size();
  job_of_key_[key] = jobs_.size();
  jobs_.push_back(Job{std::move(key), std::move(nodes), std::move(build)});
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
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = jobs_.rbegin(); it != jobs_.rend() && !job; ++it)
        if (it->state == State::kPending) job = &*it;
      if (!job) return;  // the binder has reached (or passed) every job left
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
