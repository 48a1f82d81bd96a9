// The kernels' own loops on the threads oneDNN's primitives run on: libgomp's pool, found in the
// process as SetLibraryThreads (engine/core/threads.h) finds it, so that a kernel of ours and a
// primitive never have two sets of threads competing for the cores.
#pragma once
#include <cstdint>
#include <functional>

namespace tilebank::engine {

// Calls body(begin, end) on contiguous chunks that cover [0, n) once, one chunk per thread, the
// threads as many as OpenMP's (omp_set_num_threads, SetLibraryThreads) but at most n / grain.
// Serial, one call, when that is one thread, inside a parallel region, or without libgomp. `body`
// must not throw.
void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

// ParallelFor over [0, n) in chunks of `chunk` elements (the last one shorter): body(first, count)
// for each run of whole chunks a thread takes. For SIMD loops over flat buffers: a chunk a multiple
// of every vector keeps each call's tail to the buffer's end.
void ParallelForChunks(int64_t n, int64_t chunk, const std::function<void(int64_t first, int64_t count)>& body);

// memcpy(to, from, bytes), on the threads in pieces of 256 KiB where it is larger than that.
void CopyOnThreads(void* to, const void* from, size_t bytes);

// The threads ParallelFor would use for unbounded work.
int ParallelThreads();

// Calls body(0) and body(1) at the same time, on two of OpenMP's threads (the caller's is one),
// and returns when both are done; inside them ParallelFor, and oneDNN's primitives, run serially.
// False, with nothing called, where there is no second thread: ParallelThreads() is 1. `body` must
// not throw.
bool RunOnTwoThreads(const std::function<void(int lane)>& body);

// Calls body() with OpenMP's thread count at one on this thread, so that ParallelFor and oneDNN's
// primitives inside it run serially here: work too small to pay for waking the other threads (a
// few microseconds a parallel region). `body` must not throw.
void RunOnThisThread(const std::function<void()>& body);

}  // namespace tilebank::engine
