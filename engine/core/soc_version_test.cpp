#include "engine/core/soc_version.h"

#include "engine/core/host_facts.h"
#include "engine/core/isa_level.h"

#include <doctest/doctest.h>

using namespace tilebank;

TEST_CASE("soc_version names arch, vendor, microarchitecture, ISA and cores") {
  CpuFacts zen4{"x86_64", "AuthenticAMD", "AMD EPYC 9654", 25, 17, "fpu sse4_2 avx avx2 fma avx512f avx512bw", 2};
  CHECK(SocVersionOf(zen4) == "x86_64-amd-zen4-avx512-2c");
  CpuFacts skylake{"x86_64", "GenuineIntel", "Intel Core i7-6700", 6, 0x5e, "sse4_2 avx avx2 fma", 8};
  CHECK(SocVersionOf(skylake) == "x86_64-intel-skylake-avx2-8c");
  CpuFacts graviton{"aarch64", "0x41", "", 0, 0, "fp asimd sve", 4};
  CHECK(SocVersionOf(graviton) == "aarch64-arm-generic-sve-4c");
  CHECK(FingerprintOf(zen4) != FingerprintOf(skylake));
}

TEST_CASE("the host has a soc_version") {
  const std::string& soc = HostSocVersion();
  CHECK(soc.find('-') != std::string::npos);
  CHECK(soc.back() == 'c');
}

TEST_CASE("ISA levels: parsed from soc_versions, ordered per architecture, with their vector facts") {
  CHECK(IsaOfSocVersion("x86_64-intel-model167-avx512-2c") == IsaLevel::kAvx512);
  CHECK(IsaOfSocVersion("x86_64-amd-zen3-avx2-2c") == IsaLevel::kAvx2);
  CHECK(IsaOfSocVersion("aarch64-arm-generic-sve-4c") == IsaLevel::kSve);
  CHECK(!IsaOfSocVersion("x86_64-amd-zen3-sve-2c"));  // not an x86 level
  CHECK(!IsaOfSocVersion("my-soc"));
  CHECK(!IsaOfSocVersion("avx2"));
  CHECK(IsaRunsOn(IsaLevel::kAvx2, IsaLevel::kAvx512));
  CHECK(!IsaRunsOn(IsaLevel::kAvx512, IsaLevel::kAvx2));
  CHECK(!IsaRunsOn(IsaLevel::kNeon, IsaLevel::kAvx2));
  CHECK(VectorFactsOf(IsaLevel::kAvx512).vector_floats == 16);
  CHECK(VectorFactsOf(IsaLevel::kAvx512).vector_registers == 32);
  CHECK(VectorFactsOf(IsaLevel::kAvx2).vector_floats == 8);
  CHECK(VectorFactsOf(IsaLevel::kAvx2).vector_registers == 16);
  CpuFacts zen4{"x86_64", "AuthenticAMD", "AMD EPYC 9654", 25, 17, "fpu sse4_2 avx avx2 fma avx512f avx512bw", 2};
  CHECK(SocVersionOf(zen4, IsaLevel::kAvx2) == "x86_64-amd-zen4-avx2-2c");
  CHECK(FingerprintOf(zen4, IsaLevel::kAvx2) != FingerprintOf(zen4));
}

TEST_CASE("the host's soc_version names the level code is generated for") {
  const std::optional<IsaLevel> level = CodegenIsa();
  REQUIRE(level);
  CHECK(IsaOfSocVersion(HostSocVersion()) == *level);
}

TEST_CASE("a judged target plans with its soc_version's vectors, and only while it lives") {
  const int host_floats = engine::Host().vector_floats;
  {
    engine::JudgedTarget avx512("x86_64-intel-model167-avx512-2c");
    CHECK(engine::Host().vector_floats == 16);
    CHECK(engine::Host().vector_registers == 32);
    {
      engine::JudgedTarget sse("x86_64-intel-old-sse-2c");
      CHECK(engine::Host().vector_floats == 4);
    }
    CHECK(engine::Host().vector_floats == 16);
    engine::JudgedTarget unknown("not-a-cpu");
    CHECK(engine::Host().vector_floats == 16);  // names no level: unchanged
  }
  CHECK(engine::Host().vector_floats == host_floats);
}
