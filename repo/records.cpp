#include "repo/records.h"

#include "repo/entry_codec.h"

namespace tilebank {

int GetRecord(MDB_txn* txn, MDB_dbi db, std::string_view key, std::optional<std::string_view>* stored) {
  MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
  int rc = mdb_get(txn, db, &k, &v);
  *stored = rc == 0 ? std::optional<std::string_view>(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size))
                    : std::nullopt;
  return rc;
}

int GetRecord(MDB_txn* txn, MDB_dbi db, Key key, std::optional<std::string_view>* stored) {
  KeyBytes kb = EncodeKey(key);
  return GetRecord(txn, db, std::string_view(reinterpret_cast<const char*>(kb.data()), kb.size()), stored);
}

Result<Entry> DecodeEntryAt(EntryKind kind, Key key, std::string_view stored) {
  auto entry = DecodeEntry(stored);
  if (!entry.ok()) return entry.status().WithContext(EntryName(kind, key));
  return entry;
}

Result<std::optional<Entry>> DecodeRecord(EntryKind kind, Key key, std::optional<std::string_view> stored) {
  if (!stored) return std::optional<Entry>();
  auto entry = DecodeEntryAt(kind, key, *stored);
  if (!entry.ok()) return entry.status();
  return std::optional<Entry>(std::move(*entry));
}

int PutShapeIndexRow(MDB_txn* txn, MDB_dbi shape_db, Key shape_class, Key key) {
  KeyBytes cb = EncodeKey(shape_class), kb = EncodeKey(key);
  MDB_val ck{cb.size(), cb.data()}, cv{kb.size(), kb.data()};
  int rc = mdb_put(txn, shape_db, &ck, &cv, MDB_NODUPDATA);
  return rc == MDB_KEYEXIST ? 0 : rc;
}

}  // namespace tilebank
