// Halide's parallel loops on OpenMP's threads, the ones oneDNN's primitives and the kernels' own
// loops run on (engine/core/parallel_for.h). Halide's runtime otherwise starts its own pool: with two
// cores, its workers and OpenMP's, each spinning a while after its last loop, took turns on the
// cores. A graph attention network's [4,500,500] Add ran 50 us on one thread and 390-435 us on two,
// its Softmax 300 against 650.
#pragma once
#include <cstdint>
#include <functional>

namespace tilebank::engine {

// task(i) for each i in [min, min + size), in any order, on ParallelFor's threads (serially inside a
// parallel region); zero when every call returned zero, else one of their results: halide_do_par_for's
// contract.
int RunParallelTasks(int min, int size, const std::function<int(int)>& task);
// halide_do_par_for for the runtime that kernels compiled ahead of time share.
int OpenMpDoParFor(void* user_context, int (*task)(void*, int, uint8_t*), int min, int size, uint8_t* closure);

// Makes the Halide runtime that `runtime_handle` (dlopen's) holds run its parallel loops through
// OpenMpDoParFor. False where that runtime has no halide_set_custom_do_par_for.
bool UseOpenMpForHalideRuntime(void* runtime_handle);

}  // namespace tilebank::engine
