#include "engine/core/host_facts.h"

#include <unistd.h>

#include <cstdlib>

#include "engine/core/isa_level.h"

namespace tilebank::engine {
namespace {

using Feature = Halide::Target::Feature;

constexpr Feature kAvx512Features[] = {Feature::AVX512, Feature::AVX512_KNL, Feature::AVX512_Skylake, Feature::AVX512_Cannonlake,
                                       Feature::AVX512_SapphireRapids};

// `target` without the x86 features above `level` (other architectures are left as they are).
Halide::Target WithinLevel(Halide::Target target, IsaLevel level) {
  if (target.arch != Halide::Target::X86) return target;
  if (level != IsaLevel::kAvx512)
    for (Feature f : kAvx512Features) target = target.without_feature(f);
  if (level == IsaLevel::kSse || level == IsaLevel::kAvx)
    for (Feature f : {Feature::AVX2, Feature::FMA, Feature::F16C}) target = target.without_feature(f);
  if (level == IsaLevel::kSse) target = target.without_feature(Feature::AVX);
  return target;
}

// The Halide target that code for `level` would be generated for on an x86-64 Linux host.
Halide::Target TargetOfLevel(const Halide::Target& host, IsaLevel level) {
  Halide::Target t = host;
  if (t.arch != Halide::Target::X86) return t;
  for (Feature f : {Feature::SSE41, Feature::AVX, Feature::AVX2, Feature::FMA, Feature::F16C, Feature::AVX512, Feature::AVX512_Skylake})
    t = t.with_feature(f);
  return WithinLevel(t, level);
}

thread_local const HostFacts* judged = nullptr;

const HostFacts& CodegenFacts() {
  static const HostFacts facts = [] {
    HostFacts f;
    f.target = Halide::get_jit_target_from_environment();
    if (auto requested = RequestedIsa(); requested.ok() && *requested) f.target = WithinLevel(f.target, **requested);
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

}  // namespace

const HostFacts& Host() { return judged ? *judged : CodegenFacts(); }

JudgedTarget::JudgedTarget(const std::string& soc_version) : previous_(judged), facts_(Host()) {
  const std::optional<IsaLevel> level = IsaOfSocVersion(soc_version);
  if (!level) return;
  const VectorFacts vectors = VectorFactsOf(*level);
  facts_.target = TargetOfLevel(facts_.target, *level);
  facts_.vector_floats = vectors.vector_floats;
  facts_.vector_registers = vectors.vector_registers;
  judged = &facts_;
}

JudgedTarget::~JudgedTarget() { judged = previous_; }

}  // namespace tilebank::engine
