// One thread count for every library the kernels run on: Halide's thread pool (HL_NUM_THREADS,
// read when the pool starts), OpenBLAS (OPENBLAS_NUM_THREADS, read when it is opened on first
// use) and oneDNN, whose OpenMP runtime read OMP_NUM_THREADS when the process started: it is told
// through omp_set_num_threads. Call it before the first kernel runs.
#pragma once

namespace tilebank::engine {

void SetLibraryThreads(int threads);

}  // namespace tilebank::engine
