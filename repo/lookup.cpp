#include "repo/lookup.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "repo/validate.h"

namespace tilebank {

const char* LookupStateName(LookupState state) {
  switch (state) {
    case LookupState::kHit: return "hit";
    case LookupState::kNearest: return "nearest";
    case LookupState::kStale: return "stale";
    case LookupState::kMiss: return "miss";
  }
  return "?";
}

double ShapeDistance(const std::string& canonical_a, const std::string& canonical_b) {
  using json = nlohmann::json;
  const double infinity = std::numeric_limits<double>::infinity();
  json a = json::parse(canonical_a, nullptr, false), b = json::parse(canonical_b, nullptr, false);
  if (a.is_discarded() || b.is_discarded()) return infinity;
  double distance = 0;
  for (const char* side : {"in", "out"}) {
    if (!a.contains(side) || !b.contains(side) || a[side].size() != b[side].size()) return infinity;
    for (size_t t = 0; t < a[side].size(); ++t) {
      const json& sa = a[side][t]["shape"];
      const json& sb = b[side][t]["shape"];
      if (sa.size() != sb.size()) return infinity;
      for (size_t d = 0; d < sa.size(); ++d) {
        double x = std::max<int64_t>(sa[d].get<int64_t>(), 1), y = std::max<int64_t>(sb[d].get<int64_t>(), 1);
        distance += std::fabs(std::log2(x / y));
      }
    }
  }
  return distance;
}

Result<LookupResult> LookupPolicy(const Bank& bank, const CanonicalDescriptor& descriptor,
                                  const TemplateVersions& current_versions, bool nearest) {
  LookupResult result;
  auto found = bank.Find(descriptor.kind, descriptor.text);
  if (!found.ok()) return found.status();
  if (*found) {
    result.stale_reason = StaleReason(**found, current_versions);
    result.state = result.stale_reason.empty() ? LookupState::kHit : LookupState::kStale;
    result.entry = std::move(*found);
    if (result.state == LookupState::kHit || !nearest) return result;
  }
  if (!nearest || descriptor.kind != EntryKind::kOp) return result;
  auto snapshot = bank.Read();
  if (!snapshot.ok()) return snapshot.status();
  std::optional<Entry> best;
  double best_distance = std::numeric_limits<double>::infinity();
  TB_RETURN_IF_ERROR(snapshot->ForEachInShapeClass(ShapeClassOf(descriptor.text), [&](Key key) -> Status {
    if (key == descriptor.key) return Status::Ok();
    auto candidate = snapshot->Get(EntryKind::kOp, key);
    if (!candidate.ok()) return candidate.status();
    if (!*candidate || !StaleReason(**candidate, current_versions).empty()) return Status::Ok();
    double distance = ShapeDistance(descriptor.text, (*candidate)->descriptor);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::move(*candidate);
    }
    return Status::Ok();
  }));
  if (best) {
    result.state = LookupState::kNearest;
    result.entry = std::move(best);
    result.shape_distance = best_distance;
  }
  return result;
}

}  // namespace tilebank
