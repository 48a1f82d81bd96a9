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

// The spin count libgomp's idle threads use before they sleep (GOMP_SPINCOUNT), when the user has
// not set it or OMP_WAIT_POLICY.
inline constexpr const char* kOpenMpSpinCount = "30000";

// libgomp reads GOMP_SPINCOUNT once, when it is loaded, before main. By default its threads spin
// for a long while after each oneDNN primitive and take the cores from a Halide kernel that runs
// next: BERT, whose steps alternate between the two, ran 155 ms instead of 130. Call first in
// main: unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY, it sets kOpenMpSpinCount and
// executes the program again (once; on failure it returns and nothing changes).
void ShortenOpenMpSpinning(char** argv);

}  // namespace tilebank::engine
