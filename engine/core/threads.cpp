#include "engine/core/threads.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace tilebank::engine {

void SetLibraryThreads(int threads) {
  if (threads <= 0) return;
  const std::string n = std::to_string(threads);
  for (const char* var : {"HL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) setenv(var, n.c_str(), 1);
  UseLibraryThreadsHere(threads);
}

// oneDNN's OpenMP runtime is already loaded (a dependency of libdnnl): its functions are looked up
// rather than linked.
int LibraryThreadsHere() {
  using GetMaxThreads = int (*)();
  auto* get = reinterpret_cast<GetMaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get ? get() : 1;
}

void UseLibraryThreadsHere(int threads) {
  using SetNumThreads = void (*)(int);
  if (auto* set = reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads")); set && threads > 0) set(threads);
}

}  // namespace tilebank::engine
