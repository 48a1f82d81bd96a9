#include "engine/backends/halide/halide_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>

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

#if defined(__x86_64__) || defined(__i386__)
// The CPUID words Halide's host detection reads (and the vendor), and XCR0 when the OS saves it.
std::string CpuFeatureWords() {
  std::string text;
  // The words that hold features (not leaf 1's EBX, whose APIC ID names the core this runs on).
  auto add = [&](unsigned leaf, unsigned sub, bool eax, bool ebx) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(leaf, sub, &a, &b, &c, &d)) a = b = c = d = 0;
    char word[64];
    std::snprintf(word, sizeof word, "%x.%x:%x,%x,%x,%x;", leaf, sub, eax ? a : 0, ebx ? b : 0, c, d);
    text += word;
    return c;
  };
  add(0, 0, true, true);  // the vendor
  const unsigned leaf1_ecx = add(1, 0, false, false);
  add(7, 0, false, true);
  add(7, 1, true, false);
  add(0x80000001u, 0, false, false);
  if (leaf1_ecx & bit_OSXSAVE) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    text += "xcr0:" + std::to_string((static_cast<unsigned long long>(hi) << 32) | lo);
  }
  return text;
}
#endif

}  // namespace

std::string HostHalideTargetId() {
#if defined(__x86_64__) || defined(__i386__)
  static const std::string cpu = CpuFeatureWords();
  const char* jit = std::getenv("HL_JIT_TARGET");
  const char* isa = std::getenv("TILEBANK_ISA");
  const HostFacts& host = Host();
  return "cpu " + cpu + " HL_JIT_TARGET " + (jit ? jit : "") + " TILEBANK_ISA " + (isa ? isa : "") + " judged " +
         (host.judged && host.level ? std::string(IsaName(*host.level)) : "no");
#else
  return HostHalideTarget().to_string();
#endif
}

Halide::Target HostHalideTarget() {
  const HostFacts& host = Host();
  return host.judged && host.level ? TargetOfLevel(CodegenTarget(), *host.level) : CodegenTarget();
}

}  // namespace tilebank::engine
