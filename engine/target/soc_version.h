// The host's soc_version, read from the CPU:
//   <arch>-<vendor>-<microarch>-<isa>-<N>c, e.g. x86_64-amd-zen4-avx512-2c
// and a fingerprint (model name, family/model, ISA flags) recorded in a bank at creation.
#pragma once
#include <string>

namespace tilebank {

struct CpuFacts {
  std::string arch;        // x86_64, aarch64
  std::string vendor_id;   // GenuineIntel, AuthenticAMD, or the ARM implementer
  std::string model_name;
  int family = 0;
  int model = 0;
  std::string flags;       // space-separated, as /proc/cpuinfo lists them
  int cores = 1;
};

CpuFacts ReadHostCpu();
std::string SocVersionOf(const CpuFacts& cpu);
std::string FingerprintOf(const CpuFacts& cpu);

// Cached for the process.
const std::string& HostSocVersion();
const std::string& HostFingerprint();

}  // namespace tilebank
