#include "repo/maintenance.h"

#include "repo/entry_codec.h"
#include "repo/records.h"
#include "repo/validate.h"

namespace tilebank {

Result<std::vector<Entry>> EntryLog(const Bank& bank, EntryKind kind, Key key) {
  auto snapshot = bank.Read();
  if (!snapshot.ok()) return snapshot.status();
  std::vector<Entry> log;
  TB_RETURN_IF_ERROR(snapshot->ForEachHistory(
      [&](EntryKind, Key, uint32_t revision, std::string_view stored) {
        auto entry = DecodeEntry(stored);
        if (!entry.ok()) return entry.status().WithContext("history of " + FormatKey(kind, key) + " revision " + std::to_string(revision));
        log.push_back(std::move(*entry));
        return Status::Ok();
      },
      std::pair(kind, key)));
  auto live = snapshot->Get(kind, key);
  if (!live.ok()) return live.status();
  if (*live) log.push_back(std::move(**live));
  return log;
}

Result<size_t> PruneStale(Bank& bank, const TemplateVersions& current_versions, bool dry_run) {
  std::vector<std::pair<EntryKind, Key>> stale;
  {
    auto snapshot = bank.Read();
    if (!snapshot.ok()) return snapshot.status();
    for (EntryKind kind : kAllKinds)
      TB_RETURN_IF_ERROR(snapshot->ForEach(kind, [&](Key key, std::string_view stored) {
        auto entry = DecodeEntryAt(kind, key, stored);
        if (!entry.ok()) return entry.status();
        if (!StaleReason(*entry, current_versions).empty()) stale.push_back({kind, key});
        return Status::Ok();
      }));
  }
  size_t removed = 0;
  Status s = bank.Write(
      [&](WriteTxn& txn) -> Status {
        removed = 0;
        for (auto [kind, key] : stale) {
          // Decided again inside the transaction: a writer may have refreshed the entry meanwhile.
          auto entry = txn.Get(kind, key);
          if (!entry.ok()) return entry.status();
          if (!*entry || StaleReason(**entry, current_versions).empty()) continue;
          auto gone = txn.Remove(kind, key);
          if (!gone.ok()) return gone.status();
          removed += *gone;
        }
        return Status::Ok();
      },
      !dry_run);
  if (!s.ok()) return s;
  return removed;
}

}  // namespace tilebank
