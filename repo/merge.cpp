#include "repo/merge.h"

#include <queue>

#include "repo/entry_codec.h"

namespace tilebank {
namespace {

// Checks a source's record into `view`; errors name the source and the entry.
Status CheckSourceRecord(const Bank& source, EntryKind kind, Key key, std::string_view stored, EntryView& view) {
  auto where = [&] { return "source '" + source.dir() + "', " + KindName(kind) + " entry " + FormatKey(kind, key); };
  Status checked = view.Reset(stored);
  if (!checked.ok()) return checked.WithContext(where() + " (nothing was written)");
  if (static_cast<EntryKind>(view.raw().kind()) != kind || KeyOfDescriptor(view.descriptor()) != key)
    return Status::Corrupt(where() + " is stored under the wrong key (nothing was written)");
  return Status::Ok();
}

// One Put per source entry: for a few entries into a large table.
Status PutEach(WriteTxn& txn, EntryKind kind, const std::vector<Snapshot>& snapshots,
               const std::vector<const Bank*>& sources, WriteCounts& counts) {
  EntryView view;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    TB_RETURN_IF_ERROR(snapshots[i].ForEach(kind, [&](Key key, std::string_view stored) -> Status {
      TB_RETURN_IF_ERROR(CheckSourceRecord(*sources[i], kind, key, stored, view));
      auto outcome = txn.PutStored(kind, key, view, stored);
      if (!outcome.ok()) return outcome.status();
      counts.Count(kind, *outcome);
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

// How many records a rewrite reads between handing its mapped pages back (Bank::ReleaseMappedPages):
// about 40 MiB of pages per bank.
constexpr size_t kRecordsPerRelease = 1 << 16;

// The table rewritten in key order: the destination's records as the transaction found them and
// every source's, read together in key order; for each key, the sources are decided in their
// order against the record held so far, exactly as successive Puts would, and the result is
// appended. Every page of the new table is written once and full, instead of each page being
// searched, split and copied per Put.
Status RewriteInKeyOrder(WriteTxn& txn, const Bank& destination, EntryKind kind, const std::vector<Snapshot>& snapshots,
                         const std::vector<const Bank*>& sources, WriteCounts& counts) {
  auto before = destination.Read();  // begun inside the write transaction: the same records it sees
  if (!before.ok()) return before.status();
  auto stored = before->Records(kind);
  if (!stored.ok()) return stored.status();
  std::vector<RecordCursor> cursors;
  using Head = std::pair<Key, size_t>;  // (key, source index): equal keys pop in source order
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    auto cursor = snapshots[i].Records(kind);
    if (!cursor.ok()) return cursor.status();
    if (cursor->valid()) heads.push({cursor->key(), i});
    cursors.push_back(std::move(*cursor));
  }
  TB_RETURN_IF_ERROR(txn.ClearForRewrite(kind));
  std::string held, record;
  EntryView view;
  for (size_t written = 1; stored->valid() || !heads.empty(); ++written) {
    if (written % kRecordsPerRelease == 0) {  // the read pages back to the page cache
      destination.ReleaseMappedPages();
      for (const Bank* source : sources) source->ReleaseMappedPages();
    }
    const bool from_destination = stored->valid() && (heads.empty() || stored->key() <= heads.top().first);
    const Key key = from_destination ? stored->key() : heads.top().first;
    std::optional<std::string_view> current;
    if (from_destination) current = stored->record();
    while (!heads.empty() && heads.top().first == key) {
      const size_t i = heads.top().second;
      heads.pop();
      TB_RETURN_IF_ERROR(CheckSourceRecord(*sources[i], kind, key, cursors[i].record(), view));
      auto outcome = txn.ResolveStored(kind, key, view, cursors[i].record(), current, &record);
      if (!outcome.ok()) return outcome.status();
      counts.Count(kind, *outcome);
      if (*outcome != PutOutcome::kKept) {
        held.swap(record);
        current = held;
      }
      TB_RETURN_IF_ERROR(cursors[i].Next());
      if (cursors[i].valid()) heads.push({cursors[i].key(), i});
    }
    TB_RETURN_IF_ERROR(txn.AppendRecord(kind, key, *current));
    if (from_destination) TB_RETURN_IF_ERROR(stored->Next());
  }
  return Status::Ok();
}

}  // namespace

Result<WriteCounts> MergeInto(Bank& destination, const std::vector<const Bank*>& sources, bool dry_run,
                              MergeMethod method) {
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
        for (EntryKind kind : kAllKinds) {
          size_t incoming = 0;
          for (const Snapshot& snapshot : snapshots) incoming += snapshot.Count(kind);
          if (incoming == 0) continue;
          // Rewriting costs the whole table; Puts cost a search, a split and a page copy each.
          const bool rewrite = method == MergeMethod::kRewrite ||
                               (method == MergeMethod::kAuto && incoming * 4 >= txn.Count(kind));
          TB_RETURN_IF_ERROR(rewrite ? RewriteInKeyOrder(txn, destination, kind, snapshots, sources, counts)
                                     : PutEach(txn, kind, snapshots, sources, counts));
        }
        return Status::Ok();
      },
      !dry_run);
  if (!s.ok()) return s;
  return counts;
}

}  // namespace tilebank
