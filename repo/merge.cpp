#include "repo/merge.h"

#include "repo/entry_codec.h"

namespace tilebank {

Result<WriteCounts> MergeInto(Bank& destination, const std::vector<const Bank*>& sources, bool dry_run) {
  const std::string& soc = destination.meta_at_open().soc_version;
  std::vector<Snapshot> snapshots;
  for (const Bank* source : sources) {
    if (source->meta_at_open().soc_version != soc)
      return Status::Refused("cannot merge bank '" + source->dir() + "' (soc_version " +
                             source->meta_at_open().soc_version + ") into '" + destination.dir() + "' (soc_version " +
                             soc + "): only banks of the same soc_version merge; nothing was written");
    auto snapshot = source->Read();
    if (!snapshot.ok()) return snapshot.status();
    snapshots.push_back(std::move(*snapshot));
  }
  WriteCounts counts;
  Status s = destination.Write(
      [&](WriteTxn& txn) -> Status {
        counts = WriteCounts();
        for (size_t i = 0; i < snapshots.size(); ++i) {
          for (EntryKind kind : kAllKinds) {
            TB_RETURN_IF_ERROR(snapshots[i].ForEach(kind, [&](Key key, std::string_view stored) -> Status {
              auto entry = DecodeEntry(stored);
              if (!entry.ok())
                return entry.status().WithContext("source '" + sources[i]->dir() + "', " + KindName(kind) + " entry " +
                                                  FormatKey(kind, key) + " (nothing was written)");
              if (entry->key() != key || entry->kind != kind)
                return Status::Corrupt("source '" + sources[i]->dir() + "', " + KindName(kind) + " entry " +
                                       FormatKey(kind, key) + " is stored under the wrong key (nothing was written)");
              auto outcome = txn.Put(std::move(*entry), PutPolicy::kKeepFaster);
              if (!outcome.ok()) return outcome.status();
              counts.Count(kind, *outcome);
              return Status::Ok();
            }));
          }
        }
        return Status::Ok();
      },
      !dry_run);
  if (!s.ok()) return s;
  return counts;
}

}  // namespace tilebank
