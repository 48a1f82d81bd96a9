#include "engine/core/parallel_for.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

namespace tilebank::engine {
namespace {

// libgomp's entry points, looked up rather than linked (oneDNN loads it).
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned threads, unsigned flags) = nullptr;  // GOMP_parallel: fn on every thread, joined
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
  int (*max_threads)() = nullptr;
  int (*in_parallel)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  bool ok() const { return parallel && thread_num && num_threads && max_threads && in_parallel; }
};

const OpenMp& Runtime() {
  static const OpenMp omp = [] {
    OpenMp o;
    o.parallel = reinterpret_cast<decltype(o.parallel)>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    o.thread_num = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    o.num_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
    o.max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    o.in_parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
    o.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    return o;
  }();
  return omp;
}

struct Work {
  int64_t n;
  const std::function<void(int64_t, int64_t)>* body;
  const OpenMp* omp;
};

void RunChunk(void* data) {
  const Work& w = *static_cast<const Work*>(data);
  const int64_t t = w.omp->thread_num(), threads = w.omp->num_threads();
  const int64_t begin = w.n * t / threads, end = w.n * (t + 1) / threads;
  if (begin < end) (*w.body)(begin, end);
}

struct Lanes {
  const std::function<void(int)>* body;
  const OpenMp* omp;
};

void RunLane(void* data) {
  const Lanes& l = *static_cast<const Lanes*>(data);
  // GOMP_parallel may hand out fewer threads than asked (a thread limit): the first then runs both.
  const int t = l.omp->thread_num(), threads = l.omp->num_threads();
  for (int lane = t; lane < 2; lane += threads) (*l.body)(lane);
}

}  // namespace

bool RunOnTwoThreads(const std::function<void(int lane)>& body) {
  if (ParallelThreads() < 2) return false;
  Lanes lanes{&body, &Runtime()};
  Runtime().parallel(RunLane, &lanes, 2, 0);
  return true;
}

void RunOnThisThread(const std::function<void()>& body) {
  const OpenMp& omp = Runtime();
  if (!omp.ok() || !omp.set_num_threads || omp.in_parallel()) {
    body();
    return;
  }
  // The thread count comes back even when body throws.
  struct Restore {
    const OpenMp& omp;
    int threads;
    ~Restore() {
      if (threads > 1) omp.set_num_threads(threads);
    }
  } restore{omp, omp.max_threads()};
  if (restore.threads > 1) omp.set_num_threads(1);
  body();
}

int ParallelThreads() {
  const OpenMp& omp = Runtime();
  return omp.ok() && !omp.in_parallel() ? std::max(1, omp.max_threads()) : 1;
}

void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body) {
  if (n <= 0) return;
  const int64_t threads = std::min<int64_t>(ParallelThreads(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  Work work{n, &body, &Runtime()};
  Runtime().parallel(RunChunk, &work, static_cast<unsigned>(threads), 0);
}

void ParallelForChunks(int64_t n, int64_t chunk, const std::function<void(int64_t first, int64_t count)>& body) {
  if (n <= 0) return;
  ParallelFor((n + chunk - 1) / chunk, 1, [&](int64_t begin, int64_t end) { body(begin * chunk, std::min(n, end * chunk) - begin * chunk); });
}

void CopyOnThreads(void* to, const void* from, size_t bytes) {
  constexpr int64_t kPiece = 256 << 10;
  if (bytes <= static_cast<size_t>(kPiece)) {
    if (bytes) std::memcpy(to, from, bytes);
    return;
  }
  ParallelForChunks(static_cast<int64_t>(bytes), kPiece, [&](int64_t first, int64_t count) {
    std::memcpy(static_cast<char*>(to) + first, static_cast<const char*>(from) + first, static_cast<size_t>(count));
  });
}

}  // namespace tilebank::engine
