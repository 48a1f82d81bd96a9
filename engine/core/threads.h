// One thread count for every library the kernels run on: Halide's thread pool (HL_NUM_THREADS,
// read when the pool starts), OpenBLAS (OPENBLAS_NUM_THREADS, read when it is opened on first
// use) and oneDNN, whose OpenMP runtime read OMP_NUM_THREADS when the process started: it is told
// through omp_set_num_threads. Call it before the first kernel runs.
#pragma once

namespace tilebank::engine {

void SetLibraryThreads(int threads);
// The OpenMP thread count the calling thread's parallel regions use (omp_get_max_threads: what
// SetLibraryThreads set on the thread that called it, else the default); 1 where OpenMP is absent.
int LibraryThreadsHere();
// Gives the calling thread (one this process started) `threads` for its OpenMP regions: each thread
// keeps its own count, and a new one starts from the default, not from SetLibraryThreads'.
void UseLibraryThreadsHere(int threads);

// While it lives, the calling thread's OpenMP regions (oneDNN's calls among them) run on one thread
// when `serial` is true; the count before it comes back after. For work too small to split: a
// parallel region's start and join cost more than the second thread gains.
class SerialLibraryScope {
 public:
  explicit SerialLibraryScope(bool serial) : before_(serial ? LibraryThreadsHere() : 0) {
    if (before_ > 1) UseLibraryThreadsHere(1);
  }
  ~SerialLibraryScope() {
    if (before_ > 1) UseLibraryThreadsHere(before_);
  }
  SerialLibraryScope(const SerialLibraryScope&) = delete;
  SerialLibraryScope& operator=(const SerialLibraryScope&) = delete;

 private:
  int before_;
};

}  // namespace tilebank::engine
