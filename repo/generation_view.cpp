#include "repo/generation_view.h"

#include "repo/entry_codec.h"

namespace tilebank {

Result<std::map<Key, std::string>> StoredEntriesAt(const Snapshot& snapshot, EntryKind kind,
                                                   std::optional<uint64_t> generation) {
  std::map<Key, std::string> out;
  if (generation && *generation > snapshot.meta().generation)
    return Status::InvalidInput("generation " + std::to_string(*generation) + " does not exist yet (the bank is at " +
                                std::to_string(snapshot.meta().generation) + ")");
  auto written_by = [&](std::string_view stored, uint64_t* written, uint64_t* superseded) -> Status {
    auto entry = DecodeEntry(stored);
    if (!entry.ok()) return entry.status();
    *written = entry->generation;
    *superseded = entry->superseded_generation;
    return Status::Ok();
  };
  TB_RETURN_IF_ERROR(snapshot.ForEach(kind, [&](Key key, std::string_view stored) -> Status {
    uint64_t written = 0, superseded = 0;
    if (generation) {
      Status s = written_by(stored, &written, &superseded);
      if (!s.ok()) return s.WithContext(EntryName(kind, key));
      if (written > *generation) return Status::Ok();
    }
    out.emplace(key, std::string(stored));
    return Status::Ok();
  }));
  if (!generation) return out;
  TB_RETURN_IF_ERROR(snapshot.ForEachHistory([&](EntryKind k, Key key, uint32_t revision, std::string_view stored) {
    if (k != kind) return Status::Ok();
    uint64_t written = 0, superseded = 0;
    Status s = written_by(stored, &written, &superseded);
    if (!s.ok()) return s.WithContext("history of " + FormatKey(kind, key) + " revision " + std::to_string(revision));
    if (written <= *generation && *generation < superseded) out[key] = std::string(stored);
    return Status::Ok();
  }));
  return out;
}

}  // namespace tilebank
