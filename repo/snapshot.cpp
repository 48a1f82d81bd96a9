// Snapshot: reads inside one LMDB read transaction.
#include <cstring>

#include "repo/bank.h"
#include "repo/entry_codec.h"
#include "repo/records.h"

namespace tilebank {
namespace {

Status IterateCursor(MDB_txn* txn, MDB_dbi db, MDB_cursor_op first, MDB_val* start,
                     const std::function<Status(const MDB_val&, const MDB_val&)>& visit) {
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn, db, &cursor);
  if (rc != 0) return LmdbStatus(rc, "opening a cursor");
  MDB_val k{}, v{};
  if (start) k = *start;
  Status s;
  for (rc = mdb_cursor_get(cursor, &k, &v, first); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    s = visit(k, v);
    if (!s.ok()) break;
  }
  mdb_cursor_close(cursor);
  if (!s.ok()) return s;
  return rc == MDB_NOTFOUND || rc == 0 ? Status::Ok() : LmdbStatus(rc, "iterating");
}

// Stops an iteration early without reporting an error.
const char* const kStop = "stop";

}  // namespace

Snapshot::Snapshot(Snapshot&& other) noexcept : bank_(other.bank_), txn_(other.txn_), meta_(std::move(other.meta_)) {
  other.txn_ = nullptr;
}

Snapshot::~Snapshot() {
  if (txn_) mdb_txn_abort(txn_);
}

Result<std::optional<std::string_view>> Snapshot::GetStored(EntryKind kind, Key key) const {
  std::optional<std::string_view> stored;
  int rc = GetRecord(txn_, bank_->EntryDb(kind), key, &stored);
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading " + FormatKey(kind, key));
  return stored;
}

Result<std::optional<Entry>> Snapshot::Get(EntryKind kind, Key key) const {
  auto stored = GetStored(kind, key);
  if (!stored.ok()) return stored.status();
  return DecodeRecord(kind, key, *stored);
}

Status Snapshot::ForEach(EntryKind kind, const std::function<Status(Key, std::string_view)>& visit) const {
  return IterateCursor(txn_, bank_->EntryDb(kind), MDB_FIRST, nullptr, [&](const MDB_val& k, const MDB_val& v) {
    if (k.mv_size != 8) return Status::Corrupt(std::string("a key in the ") + KindName(kind) + " database is not 8 bytes");
    return visit(DecodeKey(k.mv_data), {static_cast<const char*>(v.mv_data), v.mv_size});
  });
}

RecordCursor::RecordCursor(RecordCursor&& other) noexcept
    : cursor_(other.cursor_), kind_(other.kind_), valid_(other.valid_), key_(other.key_), record_(other.record_) {
  other.cursor_ = nullptr;
}

RecordCursor::~RecordCursor() {
  if (cursor_) mdb_cursor_close(cursor_);
}

Status RecordCursor::Load(int rc, const MDB_val& k, const MDB_val& v) {
  valid_ = false;
  if (rc == MDB_NOTFOUND) return Status::Ok();
  if (rc != 0) return LmdbStatus(rc, std::string("reading the ") + KindName(kind_) + " database");
  if (k.mv_size != 8) return Status::Corrupt(std::string("a key in the ") + KindName(kind_) + " database is not 8 bytes");
  key_ = DecodeKey(k.mv_data);
  record_ = {static_cast<const char*>(v.mv_data), v.mv_size};
  valid_ = true;
  return Status::Ok();
}

Status RecordCursor::Next() {
  MDB_val k{}, v{};
  int rc = mdb_cursor_get(cursor_, &k, &v, MDB_NEXT);
  return Load(rc, k, v);
}

Result<RecordCursor> Snapshot::Records(EntryKind kind) const {
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, bank_->EntryDb(kind), &cursor);
  if (rc != 0) return LmdbStatus(rc, "opening a cursor");
  RecordCursor records(cursor, kind);
  MDB_val k{}, v{};
  rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  TB_RETURN_IF_ERROR(records.Load(rc, k, v));
  return records;
}

Status Snapshot::ForEachHistory(
    const std::function<Status(EntryKind, Key, uint32_t, std::string_view)>& visit,
    std::optional<std::pair<EntryKind, Key>> only_key) const {
  unsigned char prefix[9] = {0};
  MDB_val start{9, prefix};
  if (only_key) {
    prefix[0] = static_cast<unsigned char>(only_key->first);
    KeyBytes kb = EncodeKey(only_key->second);
    std::memcpy(prefix + 1, kb.data(), 8);
  }
  Status s = IterateCursor(txn_, bank_->history_db_, only_key ? MDB_SET_RANGE : MDB_FIRST, only_key ? &start : nullptr,
                           [&](const MDB_val& k, const MDB_val& v) -> Status {
                             const auto* p = static_cast<const unsigned char*>(k.mv_data);
                             if (k.mv_size != 13 || p[0] > 2) return Status::Corrupt("malformed history key");
                             if (only_key && std::memcmp(p, prefix, 9) != 0) return Status::NotFound(kStop);
                             uint32_t revision = (uint32_t(p[9]) << 24) | (uint32_t(p[10]) << 16) | (uint32_t(p[11]) << 8) | p[12];
                             return visit(static_cast<EntryKind>(p[0]), DecodeKey(p + 1), revision,
                                          {static_cast<const char*>(v.mv_data), v.mv_size});
                           });
  if (s.code() == StatusCode::kNotFound && s.message() == kStop) return Status::Ok();
  return s;
}

Status Snapshot::ForEachInShapeClass(std::string_view shape_class, const std::function<Status(Key)>& visit) const {
  if (!bank_->has_shape_index_) return Status::Refused("bank at '" + bank_->dir_ + "' has no shape index: run `tilebank bank upgrade`");
  KeyBytes cb = EncodeKey(KeyOfDescriptor(shape_class));
  MDB_val start{cb.size(), cb.data()};
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, bank_->shape_db_, &cursor);
  if (rc != 0) return LmdbStatus(rc, "opening a cursor");
  MDB_val v;
  Status s;
  for (rc = mdb_cursor_get(cursor, &start, &v, MDB_SET_KEY); rc == 0 && s.ok();
       rc = mdb_cursor_get(cursor, &start, &v, MDB_NEXT_DUP))
    s = v.mv_size == 8 ? visit(DecodeKey(v.mv_data)) : Status::Corrupt("malformed shape index value");
  mdb_cursor_close(cursor);
  if (!s.ok()) return s;
  return rc == MDB_NOTFOUND || rc == 0 ? Status::Ok() : LmdbStatus(rc, "reading the shape index");
}

Status Snapshot::ForEachShapeIndexRow(const std::function<Status(uint64_t, Key)>& visit) const {
  if (!bank_->has_shape_index_) return Status::Ok();
  return IterateCursor(txn_, bank_->shape_db_, MDB_FIRST, nullptr, [&](const MDB_val& k, const MDB_val& v) {
    if (k.mv_size != 8 || v.mv_size != 8) return Status::Corrupt("malformed shape index row");
    return visit(DecodeKey(k.mv_data), DecodeKey(v.mv_data));
  });
}

size_t Snapshot::Count(EntryKind kind) const {
  MDB_stat st{};
  mdb_stat(txn_, bank_->EntryDb(kind), &st);
  return st.ms_entries;
}

Result<std::optional<std::string>> Snapshot::GetJob(std::string_view name) const {
  std::optional<std::string_view> stored;
  int rc = GetRecord(txn_, bank_->jobs_db_, name, &stored);
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading job " + std::string(name));
  return stored ? std::optional<std::string>(*stored) : std::nullopt;
}

size_t Snapshot::HistoryCount() const {
  MDB_stat st{};
  mdb_stat(txn_, bank_->history_db_, &st);
  return st.ms_entries;
}

}  // namespace tilebank
