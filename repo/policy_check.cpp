#include "repo/policy_check.h"

#include "repo/entry_codec.h"

namespace tilebank {

namespace {

Status Refusal(const Entry& e, const std::string& problem, const std::string& source) {
  return Status::Refused(source + ": " + KindName(e.kind) + " entry " + FormatKey(e.kind, e.key()) + " (" + e.template_id +
                         "): " + problem + "; no kernel can run this policy, nothing was written");
}

}  // namespace

Status RefuseInvalidPolicies(const std::vector<Entry>& entries, const PolicyCheck& check, const std::string& source) {
  if (!check) return Status::Ok();
  for (const Entry& e : entries)
    if (std::string problem = check(e); !problem.empty()) return Refusal(e, problem, source);
  return Status::Ok();
}

Status RefuseInvalidPolicies(const Snapshot& snapshot, const PolicyCheck& check, const std::string& source) {
  if (!check) return Status::Ok();
  for (EntryKind kind : kAllKinds)
    TB_RETURN_IF_ERROR(snapshot.ForEach(kind, [&](Key, std::string_view stored) -> Status {
      auto entry = DecodeEntry(stored);
      if (!entry.ok()) return Status::Ok();  // the merge itself names corrupt values
      if (std::string problem = check(*entry); !problem.empty()) return Refusal(*entry, problem, source);
      return Status::Ok();
    }));
  return Status::Ok();
}

}  // namespace tilebank
