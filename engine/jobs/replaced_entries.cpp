#include "engine/jobs/replaced_entries.h"

#include "repo/entry_json.h"
#include "repo/key.h"

namespace tilebank::engine {

nlohmann::json ReplacedToJson(const ReplacedEntries& replaced) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, entry] : replaced) j[key] = entry ? EntryToJson(*entry) : nlohmann::json();
  return j;
}

Result<ReplacedEntries> ReplacedFromJson(const nlohmann::json& j, const std::string& context) {
  if (!j.is_object()) return Status::Corrupt(context + ": 'replaced' is not an object");
  ReplacedEntries replaced;
  for (const auto& [key, entry] : j.items()) {
    if (entry.is_null()) {
      replaced[key] = std::nullopt;
      continue;
    }
    auto e = EntryFromJson(entry);
    if (!e.ok()) return e.status().WithContext(context);
    replaced[key] = std::move(e.value());
  }
  return replaced;
}

Status TakeBack(WriteTxn& txn, EntryKind kind, const ReplacedEntries& replaced) {
  for (const auto& [key, previous] : replaced) {
    if (previous) {
      auto put = txn.Put(*previous, PutPolicy::kOverwrite);
      if (!put.ok()) return put.status();
      continue;
    }
    auto k = ParseKey(key);
    if (!k.ok()) return k.status();
    auto removed = txn.Remove(kind, *k);
    if (!removed.ok()) return removed.status();
  }
  return Status::Ok();
}

}  // namespace tilebank::engine
