#include "engine/backends/halide/halide_target.h"

#include "engine/core/host_facts.h"
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

// The Halide target that code for `level` would be generated for on an x86-64 host like `host`.
Halide::Target TargetOfLevel(const Halide::Target& host, IsaLevel level) {
  Halide::Target t = host;
  if (t.arch != Halide::Target::X86) return t;
  for (Feature f : {Feature::SSE41, Feature::AVX, Feature::AVX2, Feature::FMA, Feature::F16C, Feature::AVX512, Feature::AVX512_Skylake})
    t = t.with_feature(f);
  return WithinLevel(t, level);
}

const Halide::Target& CodegenTarget() {
  static const Halide::Target target = [] {
    Halide::Target t = Halide::get_jit_target_from_environment();
    if (auto requested = RequestedIsa(); requested.ok() && *requested) t = WithinLevel(t, **requested);
    return t;
  }();
  return target;
}

}  // namespace

Halide::Target HostHalideTarget() {
  const HostFacts& host = Host();
  return host.judged && host.level ? TargetOfLevel(CodegenTarget(), *host.level) : CodegenTarget();
}

}  // namespace tilebank::engine
