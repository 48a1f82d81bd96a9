#include "engine/target/soc_version.h"

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
