// The runtime's query: the tuned policy for an operator or subgraph description, in
// microseconds, with no engine linked. A stale entry is not handed out: the caller falls back to
// its default policy. On a miss, `nearest` asks for the entry of the closest shape among
// operators that differ only in shape sizes (same op, ranks, dtypes, formats and attributes).
#pragma once
#include <optional>

#include "repo/bank.h"
#include "repo/template_versions.h"

namespace tilebank {

enum class LookupState { kHit, kNearest, kStale, kMiss };
const char* LookupStateName(LookupState state);  // "hit", "nearest", "stale", "miss"

struct LookupResult {
  LookupState state = LookupState::kMiss;
  std::optional<Entry> entry;        // hit or nearest: the policy to use; stale: the ignored entry
  std::string stale_reason;
  double shape_distance = 0;         // nearest: sum of |log2| ratios of the dimensions
};

Result<LookupResult> LookupPolicy(const Bank& bank, const CanonicalDescriptor& descriptor,
                                  const TemplateVersions& current_versions, bool nearest);

// Distance between two op descriptors of one shape class: sum over all dimensions of
// |log2(a / b)| (dimensions of 0 count as 1). Infinity when the shapes are not comparable.
double ShapeDistance(const std::string& canonical_a, const std::string& canonical_b);

}  // namespace tilebank
