#include "engine/core/host_facts.h"

#include <unistd.h>

namespace tilebank::engine {
namespace {

thread_local const HostFacts* judged = nullptr;

const HostFacts& CodegenFacts() {
  static const HostFacts facts = [] {
    HostFacts f;
    f.level = CodegenIsa();
    if (f.level) {
      const VectorFacts vectors = VectorFactsOf(*f.level);
      f.vector_floats = vectors.vector_floats;
      f.vector_registers = vectors.vector_registers;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    f.cores = cores > 0 ? static_cast<int>(cores) : 1;
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l1 > 0) f.l1_bytes = l1;
    if (l2 > 0) f.l2_bytes = l2;
    return f;
  }();
  return facts;
}

}  // namespace

const HostFacts& Host() { return judged ? *judged : CodegenFacts(); }

JudgedTarget::JudgedTarget(const std::string& soc_version) : previous_(judged), facts_(Host()) {
  const std::optional<IsaLevel> level = IsaOfSocVersion(soc_version);
  if (!level) return;
  const VectorFacts vectors = VectorFactsOf(*level);
  facts_.level = level;
  facts_.judged = true;
  facts_.vector_floats = vectors.vector_floats;
  facts_.vector_registers = vectors.vector_registers;
  judged = &facts_;
}

JudgedTarget::~JudgedTarget() { judged = previous_; }

}  // namespace tilebank::engine
