#include "engine/gdat/aoe_gdat_export.h"

#include <cstdio>

#include "engine/gdat/gdat_policy.h"
#include "engine/gdat/gradient_profile.h"
#include "repo/records.h"

namespace tilebank::engine {

Result<AoeGradientFusion> ExportAoeGradientFusion(const Snapshot& snapshot) {
  AoeGradientFusion out;
  Status s = snapshot.ForEach(EntryKind::kGrad, [&](Key key, std::string_view stored) -> Status {
    auto entry = DecodeEntryAt(EntryKind::kGrad, key, stored);
    if (!entry.ok()) return entry.status();
    const auto policy = ParseGradPolicy(*entry);
    const auto descriptor = nlohmann::json::parse(entry->descriptor, nullptr, false);
    if (!policy || descriptor.is_discarded()) {
      ++out.left_out;
      return Status::Ok();
    }
    nlohmann::json sizes = nlohmann::json::array(), split = nlohmann::json::array();
    for (const auto& g : descriptor["grads"]) sizes.push_back(g["numel"].get<int64_t>() * GradientDtypeBytes(g["dtype"].get<std::string>()));
    for (size_t end : policy->ends) split.push_back(end - 1);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(key));
    out.file.push_back({{"modelhash", hash},
                        {"modelvalue",
                         {{"gradientSize", sizes}, {"gradientTime", policy->ready_ms}, {"splitIndex", split}, {"verified", policy->verified}}}});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace tilebank::engine
