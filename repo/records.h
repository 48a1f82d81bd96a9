// Reading entry records inside an LMDB transaction, shared by Snapshot, WriteTxn and Bank.
#pragma once
#include <lmdb.h>

#include <optional>
#include <string_view>

#include "repo/entry.h"

namespace tilebank {

// The stored bytes under `key` (valid while the transaction lives), nullopt when absent;
// returns the LMDB code (0 or MDB_NOTFOUND on success).
int GetRecord(MDB_txn* txn, MDB_dbi db, Key key, std::optional<std::string_view>* stored);
// The same under a key of any bytes (a job's name in the jobs database).
int GetRecord(MDB_txn* txn, MDB_dbi db, std::string_view key, std::optional<std::string_view>* stored);

// Decodes one stored value; errors name the kind and key.
Result<Entry> DecodeEntryAt(EntryKind kind, Key key, std::string_view stored);
// Decodes a record found by GetRecord (nullopt stays nullopt).
Result<std::optional<Entry>> DecodeRecord(EntryKind kind, Key key, std::optional<std::string_view> stored);

// Adds the shape_class index row (shape class -> op key); an existing row is fine. LMDB code.
int PutShapeIndexRow(MDB_txn* txn, MDB_dbi shape_db, Key shape_class, Key key);

}  // namespace tilebank
