// Kernels built ahead on a second thread while the executor binds a model in graph order: the
// cube ops' (convolutions and products on oneDNN, fused or not), whose primitive creation, JIT
// and weight reorders are most of a load. The executor plans each job with the choice it will
// make (the same policy lookups, on its own thread), the worker takes every other job (the binder
// builds the rest itself, so that neither waits for the other), in graph order, at most
// kLookahead jobs ahead of the binder (each job's kernel holds packed weights while the graph still
// holds the float ones: further ahead, the load's peak memory grows), and the binding thread, on
// reaching a node, settles its job (cancels it when not started, waits when running) and takes the
// kernel only when the job's key is exactly what it would build. A job whose key no longer matches
// is wasted work, never a different kernel.
//
// Contract: a job reads the graph's values (shapes and constants) only; the binder must call
// Settle(node) for every node of a job before it frees or changes a constant the job reads.
#pragma once
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/kernel.h"

namespace tilebank::engine::model {

class KernelPrefetch {
 public:
  // A kernel already bound on the direct path (weights in its layout), or an error.
  using Build = std::function<Result<std::unique_ptr<Kernel>>()>;
  static constexpr size_t kLookahead = 3;  // jobs the worker may be ahead of the binder's next one

  KernelPrefetch() = default;
  ~KernelPrefetch();  // cancels what has not started and joins the worker
  KernelPrefetch(const KernelPrefetch&) = delete;
  KernelPrefetch& operator=(const KernelPrefetch&) = delete;

  // Adds a job, before Start: `key` names what it builds, `nodes` are the graph nodes it binds.
  void Add(std::string key, std::vector<int> nodes, Build build);
  // Starts the worker with `library_threads` for its OpenMP regions, as the binder's (nothing when
  // there are fewer than two jobs). `wait_for_pending`: Settle waits for the worker to build a job
  // it has not started rather than cancel it, so that every job is built ahead (for tests).
  void Start(int library_threads, bool wait_for_pending = false);
  // Called when the binder reaches `node`: its job is cancelled if not started (or awaited, see
  // Start), awaited if running.
  void Settle(int node);
  // The kernel of the settled job built under `key` (which names the values it reads, so that two
  // nodes never share one); null when there is none or it failed. Each kernel is taken once.
  std::unique_ptr<Kernel> Take(const std::string& key);
  size_t taken() const { return taken_; }

 private:
  enum class State { kPending, kRunning, kDone, kCancelled };
  struct Job {
    std::string key;
    Build build;
    State state = State::kPending;
    std::unique_ptr<Kernel> kernel;  // kDone and built
  };
  void Work();

  std::vector<Job> jobs_;
  std::map<int, size_t> job_of_node_;  // each node of a job -> the job
  std::map<std::string, size_t> job_of_key_;
  std::mutex mutex_;
  std::condition_variable done_;     // a job finished
  std::condition_variable advanced_;  // the binder reached another job, or the prefetch ends
  std::thread worker_;
  size_t settled_ = 0;  // jobs before this one have been reached by the binder
  size_t taken_ = 0;
  bool wait_for_pending_ = false;
};

}  // namespace tilebank::engine::model
