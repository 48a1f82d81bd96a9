#include "engine/target/host_facts.h"

#include <unistd.h>

#include <cstdlib>

namespace tilebank::engine {

const HostFacts& Host() {
  static const HostFacts facts = [] {
    HostFacts f;
    f.target = Halide::get_jit_target_from_environment();
    f.vector_floats = f.target.natural_vector_size<float>();
    f.vector_registers = f.target.has_feature(Halide::Target::AVX512) ? 32 : 16;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    f.cores = cores > 0 ? static_cast<int>(cores) : 1;
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l1 > 0) f.l1_bytes = l1;
    if (l2 > 0) f.l2_bytes = l2;
    return f;
  }();
  return facts;
}

}  // namespace tilebank::engine
