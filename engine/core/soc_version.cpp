#include "engine/core/soc_version.h"

#include <sys/utsname.h>
#include <unistd.h>
#include <xxhash.h>

#include <fstream>
#include <sstream>

#include "engine/core/isa_level.h"

namespace tilebank {
namespace {

std::string AmdMicroarch(int family, int model) {
  if (family == 0x17) return model >= 0x30 ? "zen2" : "zen";
  if (family == 0x19) return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0xaf) ? "zen4" : "zen3";
  if (family == 0x1a) return "zen5";
  return "family" + std::to_string(family);
}

std::string IntelMicroarch(int family, int model) {
  if (family != 6) return "family" + std::to_string(family);
  switch (model) {
    case 0x4e: case 0x5e: case 0x8e: case 0x9e: case 0xa5: case 0xa6: return "skylake";
    case 0x55: return "skylakex";
    case 0x6a: case 0x6c: case 0x7d: case 0x7e: return "icelake";
    case 0x8c: case 0x8d: return "tigerlake";
    case 0x97: case 0x9a: case 0xb7: case 0xba: case 0xbf: return "alderlake";
    case 0x8f: return "sapphirerapids";
    case 0xcf: return "emeraldrapids";
    case 0xad: case 0xae: return "graniterapids";
    case 0xaa: case 0xac: return "meteorlake";
    default: return "model" + std::to_string(model);
  }
}

}  // namespace

CpuFacts ReadHostCpu() {
  CpuFacts cpu;
  struct utsname u {};
  if (uname(&u) == 0) cpu.arch = u.machine;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (name == "vendor_id" && cpu.vendor_id.empty()) cpu.vendor_id = value;
    else if (name == "CPU implementer" && cpu.vendor_id.empty()) cpu.vendor_id = value;
    else if (name == "model name" && cpu.model_name.empty()) cpu.model_name = value;
    else if (name == "cpu family" && !cpu.family) cpu.family = std::atoi(value.c_str());
    else if (name == "model" && !cpu.model) cpu.model = std::atoi(value.c_str());
    else if ((name == "flags" || name == "Features") && cpu.flags.empty()) cpu.flags = value;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu.cores = online > 0 ? static_cast<int>(online) : 1;
  return cpu;
}

std::string SocVersionOf(const CpuFacts& cpu, std::optional<IsaLevel> level) {
  std::string vendor = "unknown", microarch = "generic";
  if (cpu.vendor_id == "AuthenticAMD") {
    vendor = "amd";
    microarch = AmdMicroarch(cpu.family, cpu.model);
  } else if (cpu.vendor_id == "GenuineIntel") {
    vendor = "intel";
    microarch = IntelMicroarch(cpu.family, cpu.model);
  } else if (cpu.vendor_id == "0x41") {
    vendor = "arm";
  } else if (!cpu.vendor_id.empty()) {
    vendor = "impl" + cpu.vendor_id;
  }
  if (!level) level = IsaOfFlags(cpu.arch, cpu.flags);
  const std::string isa = level ? std::string(IsaName(*level)) : "base";
  return cpu.arch + "-" + vendor + "-" + microarch + "-" + isa + "-" + std::to_string(cpu.cores) + "c";
}

std::string FingerprintOf(const CpuFacts& cpu, std::optional<IsaLevel> level) {
  char digest[24];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(XXH3_64bits(cpu.flags.data(), cpu.flags.size())));
  return cpu.model_name + "; family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
         "; flags " + digest +
         (level ? "; code restricted to " + std::string(IsaName(*level)) : "");
}

const std::string& HostSocVersion() {
  static const std::string soc = SocVersionOf(ReadHostCpu(), CodegenIsa());
  return soc;
}

const std::string& HostFingerprint() {
  static const std::string fingerprint = [] {
    auto requested = RequestedIsa();
    return FingerprintOf(ReadHostCpu(), requested.ok() ? *requested : std::nullopt);
  }();
  return fingerprint;
}

}  // namespace tilebank
