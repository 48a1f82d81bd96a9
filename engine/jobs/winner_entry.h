// The bank entry a tuning job stores for its winner, one builder for every job type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "repo/entry.h"

namespace tilebank::engine {

// How the winner is computed: its template, that template's version, the mode and the knobs.
struct WinnerTemplate {
  std::string id;
  uint32_t version = 0;
  TuneMode mode = TuneMode::kImpl;
  std::vector<Knob> policy;
};

// One of the engine's own templates (fused subgraphs, gradient fusion) at its current version, impl mode.
WinnerTemplate EngineTemplate(const std::string& template_id, std::vector<Knob> policy);

// The entry of `op_type`/`descriptor` tuned to `how`: measured `before` (the baseline) and `after`
// over `trials` trials by `strategy`, stamped with now, this tool's version, this host and `bank_id`.
Entry WinnerEntry(EntryKind kind, const std::string& op_type, const std::string& descriptor, WinnerTemplate how,
                  const Measurement& before, const Measurement& after, int trials, const std::string& strategy,
                  const std::string& bank_id);

}  // namespace tilebank::engine
