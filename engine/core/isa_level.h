// ISA levels: what a soc_version's <isa> field names, what code generation targets, and the
// restriction of a process to a level below its host's (TILEBANK_ISA, the CLI's --isa).
//
// A level's vector facts (fp32 lanes, vector registers) are what schedule templates plan with,
// so a bank's policies are judged by the level of the bank's own soc_version, never the host's.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tilebank {

enum class IsaLevel { kSse, kAvx, kAvx2, kAvx512, kNeon, kSve, kSve2 };

// The soc_version spelling: "sse", "avx", "avx2", "avx512", "neon", "sve", "sve2".
std::string_view IsaName(IsaLevel level);
std::optional<IsaLevel> ParseIsa(std::string_view name);
// The names of the levels an x86-64 or aarch64 host may restrict to, for messages.
std::string IsaNames();

// The widest level `flags` (/proc/cpuinfo's) allow on `arch` ("x86_64", "aarch64"); nullopt elsewhere.
std::optional<IsaLevel> IsaOfFlags(const std::string& arch, const std::string& flags);
// The <isa> field of <arch>-<vendor>-<microarch>-<isa>-<N>c; nullopt when it names no known level.
std::optional<IsaLevel> IsaOfSocVersion(std::string_view soc_version);
// Whether code for `level` runs on a host whose widest level is `host` (same architecture, not wider).
bool IsaRunsOn(IsaLevel level, IsaLevel host);

struct VectorFacts {
  int vector_floats = 8;      // fp32 lanes of one vector register
  int vector_registers = 16;  // architectural vector registers
};
VectorFacts VectorFactsOf(IsaLevel level);

// The level named by TILEBANK_ISA (nullopt when unset or empty), checked against the host:
// kInvalidInput for an unknown name or a level the host lacks.
Result<std::optional<IsaLevel>> RequestedIsa();

// The level this process generates code for: TILEBANK_ISA's when set and valid, else the host's
// widest (nullopt on a host of unknown architecture).
std::optional<IsaLevel> CodegenIsa();

// Makes the libraries that pick their own code at run time stay within TILEBANK_ISA's level:
// oneDNN (ONEDNN_MAX_CPU_ISA), OpenBLAS (OPENBLAS_CORETYPE, read when it is opened) and Highway
// (its dispatch). Call at process start, before any kernel runs; a no-op without TILEBANK_ISA.
// kInvalidInput as RequestedIsa.
Status ApplyIsaRestriction();

}  // namespace tilebank
