#include "engine/core/isa_level.h"

#include <hwy/targets.h>

#include <cstdlib>
#include <sstream>

#include "engine/core/soc_version.h"

namespace tilebank {
namespace {

struct LevelRow {
  IsaLevel level;
  const char* name;
  const char* arch;
  int rank;  // order within the architecture
  VectorFacts vectors;
  const char* onednn_max_isa;       // ONEDNN_MAX_CPU_ISA; nullptr: no limit
  const char* openblas_coretype;    // OPENBLAS_CORETYPE; nullptr: OpenBLAS's own choice
  int64_t highway_disabled;         // Highway targets above the level
};

constexpr int64_t kHighwayAboveAvx2 = (int64_t{1} << 9) - 1;   // HWY_AVX3, HWY_AVX3_DL and the reserved bits below
constexpr int64_t kHighwayAboveSse4 = (int64_t{1} << 10) - 1;  // and HWY_AVX2

constexpr LevelRow kLevels[] = {
    {IsaLevel::kSse, "sse", "x86_64", 0, {4, 16}, "SSE41", "Nehalem", kHighwayAboveSse4},
    {IsaLevel::kAvx, "avx", "x86_64", 1, {8, 16}, "AVX", "Sandybridge", kHighwayAboveSse4},
    {IsaLevel::kAvx2, "avx2", "x86_64", 2, {8, 16}, "AVX2", "Haswell", kHighwayAboveAvx2},
    {IsaLevel::kAvx512, "avx512", "x86_64", 3, {16, 32}, nullptr, nullptr, 0},
    {IsaLevel::kNeon, "neon", "aarch64", 0, {4, 32}, nullptr, nullptr, 0},
    {IsaLevel::kSve, "sve", "aarch64", 1, {4, 32}, nullptr, nullptr, 0},
    {IsaLevel::kSve2, "sve2", "aarch64", 2, {4, 32}, nullptr, nullptr, 0},
};

const LevelRow& RowOf(IsaLevel level) {
  for (const LevelRow& row : kLevels)
    if (row.level == level) return row;
  return kLevels[0];  // unreachable: every level has a row
}

bool HasFlag(const std::string& flags, const std::string& flag) {
  std::istringstream in(flags);
  for (std::string f; in >> f;)
    if (f == flag) return true;
  return false;
}

std::optional<IsaLevel> HostIsa() {
  static const std::optional<IsaLevel> level = [] {
    const CpuFacts cpu = ReadHostCpu();
    return IsaOfFlags(cpu.arch, cpu.flags);
  }();
  return level;
}

}  // namespace

std::string_view IsaName(IsaLevel level) { return RowOf(level).name; }

std::optional<IsaLevel> ParseIsa(std::string_view name) {
  for (const LevelRow& row : kLevels)
    if (name == row.name) return row.level;
  return std::nullopt;
}

std::string IsaNames() {
  std::string text;
  for (const LevelRow& row : kLevels) text += (text.empty() ? "" : ", ") + std::string(row.name);
  return text;
}

std::optional<IsaLevel> IsaOfFlags(const std::string& arch, const std::string& flags) {
  if (arch == "x86_64")
    return HasFlag(flags, "avx512f") ? IsaLevel::kAvx512 : HasFlag(flags, "avx2") && HasFlag(flags, "fma") ? IsaLevel::kAvx2
           : HasFlag(flags, "avx")   ? IsaLevel::kAvx
                                     : IsaLevel::kSse;
  if (arch == "aarch64") return HasFlag(flags, "sve2") ? IsaLevel::kSve2 : HasFlag(flags, "sve") ? IsaLevel::kSve : IsaLevel::kNeon;
  return std::nullopt;
}

std::optional<IsaLevel> IsaOfSocVersion(std::string_view soc_version) {
  // <arch>-<vendor>-<microarch>-<isa>-<N>c: the field before the last.
  const size_t last = soc_version.rfind('-');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  const size_t before = soc_version.rfind('-', last - 1);
  if (before == std::string_view::npos) return std::nullopt;
  const std::optional<IsaLevel> level = ParseIsa(soc_version.substr(before + 1, last - before - 1));
  if (!level || soc_version.substr(0, soc_version.find('-')) != RowOf(*level).arch) return std::nullopt;
  return level;
}

bool IsaRunsOn(IsaLevel level, IsaLevel host) {
  const LevelRow &a = RowOf(level), &b = RowOf(host);
  return std::string_view(a.arch) == b.arch && a.rank <= b.rank;
}

VectorFacts VectorFactsOf(IsaLevel level) { return RowOf(level).vectors; }

Result<std::optional<IsaLevel>> RequestedIsa() {
  const char* value = std::getenv("TILEBANK_ISA");
  if (!value || !*value) return std::optional<IsaLevel>();
  const std::optional<IsaLevel> level = ParseIsa(value);
  if (!level) return Status::InvalidInput(std::string("TILEBANK_ISA=") + value + " (or --isa) names no ISA level; the levels: " + IsaNames());
  const std::optional<IsaLevel> host = HostIsa();
  if (!host || !IsaRunsOn(*level, *host))
    return Status::InvalidInput(std::string("TILEBANK_ISA=") + value + " (or --isa): this host's widest level is " +
                                (host ? std::string(IsaName(*host)) : std::string("unknown")) + "; code for " + value + " would not run here");
  return level;
}

std::optional<IsaLevel> CodegenIsa() {
  auto requested = RequestedIsa();
  if (requested.ok() && *requested) return *requested;
  return HostIsa();
}

Status ApplyIsaRestriction() {
  auto requested = RequestedIsa();
  if (!requested.ok()) return requested.status();
  if (!*requested) return Status::Ok();
  const LevelRow& row = RowOf(**requested);
  if (row.onednn_max_isa) setenv("ONEDNN_MAX_CPU_ISA", row.onednn_max_isa, 1);
  if (row.openblas_coretype) setenv("OPENBLAS_CORETYPE", row.openblas_coretype, 1);
  if (row.highway_disabled) hwy::DisableTargets(row.highway_disabled);
  return Status::Ok();
}

}  // namespace tilebank
