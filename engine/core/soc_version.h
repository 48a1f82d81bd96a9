// The host's soc_version, read from the CPU:
//   <arch>-<vendor>-<microarch>-<isa>-<N>c, e.g. x86_64-amd-zen4-avx512-2c
// and a fingerprint (model name, family/model, ISA flags) recorded in a bank at creation.
#pragma once
#include <optional>
#include <string>

namespace tilebank {

enum class IsaLevel;

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
// `level`: the ISA level code is generated for (engine/core/isa_level.h); nullopt: the widest
// the CPU's flags allow. The fingerprint names a level only when code is restricted to it.
std::string SocVersionOf(const CpuFacts& cpu, std::optional<IsaLevel> level = std::nullopt);
std::string FingerprintOf(const CpuFacts& cpu, std::optional<IsaLevel> level = std::nullopt);

// Cached for the process; the soc_version names the level code is generated for (TILEBANK_ISA's
// when it restricts this process, engine/core/isa_level.h).
const std::string& HostSocVersion();
const std::string& HostFingerprint();

}  // namespace tilebank
