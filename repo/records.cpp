#include "repo/records.h"

#include "repo/entry_codec.h"

namespace tilebank {

int GetRecord(MDB_txn* txn, MDB_dbi db, Key key, std::optional<std::string_view>* stored) {
  KeyBytes kb = EncodeKey(key);
  MDB_val k{kb.size(), kb.data()}, v;
  int rc = mdb_get(txn, db, &k, &v);
  *stored = rc == 0 ? std::optional<std::string_view>(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size))
                    : std::nullopt;
  return rc;
}

Result<std::optional<Entry>> DecodeRecord(EntryKind kind, Key key, std::optional<std::string_view> stored) {
  if (!stored) return std::optional<Entry>();
  auto entry = DecodeEntry(*stored);
  if (!entry.ok()) return entry.status().WithContext(std::string(KindName(kind)) + " entry " + FormatKey(kind, key));
  return std::optional<Entry>(std::move(*entry));
}

}  // namespace tilebank
