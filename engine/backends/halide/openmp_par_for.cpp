#include "engine/backends/halide/openmp_par_for.h"

#include <dlfcn.h>

#include <atomic>

#include "engine/core/parallel_for.h"

namespace tilebank::engine {

int RunParallelTasks(int min, int size, const std::function<int(int)>& task) {
  std::atomic<int> failed{0};
  ParallelFor(size, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (const int result = task(min + static_cast<int>(i)); result != 0) {
        int none = 0;
        failed.compare_exchange_strong(none, result);
      }
  });
  return failed.load();
}

int OpenMpDoParFor(void* user_context, int (*task)(void*, int, uint8_t*), int min, int size, uint8_t* closure) {
  return RunParallelTasks(min, size, [&](int i) { return task(user_context, i, closure); });
}

bool UseOpenMpForHalideRuntime(void* runtime_handle) {
  using DoParFor = int (*)(void*, int (*)(void*, int, uint8_t*), int, int, uint8_t*);
  using SetDoParFor = DoParFor (*)(DoParFor);
  auto* set = reinterpret_cast<SetDoParFor>(dlsym(runtime_handle, "halide_set_custom_do_par_for"));
  if (!set) return false;
  set(OpenMpDoParFor);
  return true;
}

}  // namespace tilebank::engine
