// WriteTxn: the decisions made inside one write transaction (keep-faster, history, index).
#include <algorithm>
#include <cstring>

#include "repo/bank.h"
#include "repo/entry_codec.h"
#include "repo/records.h"

namespace tilebank {
namespace {

// history key: kind byte, 8-byte key, 4-byte big-endian revision (so revisions sort in order)
std::array<unsigned char, 13> HistoryKey(EntryKind kind, Key key, uint32_t revision) {
  std::array<unsigned char, 13> out{};
  out[0] = static_cast<unsigned char>(kind);
  KeyBytes k = EncodeKey(key);
  std::memcpy(out.data() + 1, k.data(), 8);
  for (int i = 0; i < 4; ++i) out[9 + i] = static_cast<unsigned char>(revision >> (24 - 8 * i));
  return out;
}

// Only gradient plans record how they were verified (PeekCurrent reads the held entry's rank alike).
int RankOf(const Entry& e) { return e.kind == EntryKind::kGrad ? e.VerificationRank() : 0; }

}  // namespace

Result<PutPolicy> ParsePutPolicy(std::string_view name) {
  if (name == "keep-faster") return PutPolicy::kKeepFaster;
  if (name == "overwrite") return PutPolicy::kOverwrite;
  if (name == "keep-existing") return PutPolicy::kKeepExisting;
  return Status::InvalidInput("unknown policy '" + std::string(name) + "' (expected keep-faster, overwrite or keep-existing)");
}

Status WriteTxn::Check(int rc, const std::string& what) {
  if (rc == 0) return Status::Ok();
  if (rc == MDB_MAP_FULL) map_full_ = true;
  return LmdbStatus(rc, what + " in bank at '" + bank_->dir_ + "'");
}

Status WriteTxn::CheckAt(int rc, const char* what, EntryKind kind, Key key) {
  if (rc == 0) return Status::Ok();  // the message is built only for an error: this runs per record
  return Check(rc, std::string(what) + " " + FormatKey(kind, key));
}

Result<std::optional<std::string_view>> WriteTxn::GetStored(EntryKind kind, Key key) {
  std::optional<std::string_view> stored;
  int rc = GetRecord(txn_, bank_->EntryDb(kind), key, &stored);
  if (rc != MDB_NOTFOUND) TB_RETURN_IF_ERROR(Check(rc, "reading"));
  return stored;
}

size_t WriteTxn::Count(EntryKind kind) const {
  MDB_stat table{};
  return mdb_stat(txn_, bank_->EntryDb(kind), &table) == 0 ? table.ms_entries : 0;
}

Result<std::optional<Entry>> WriteTxn::Get(EntryKind kind, Key key) {
  auto stored = GetStored(kind, key);
  if (!stored.ok()) return stored.status();
  return DecodeRecord(kind, key, *stored);
}

Status WriteTxn::PutRecord(EntryKind kind, Key key, std::string_view record, unsigned flags) {
  KeyBytes kb = EncodeKey(key);
  MDB_val k{kb.size(), kb.data()}, v{record.size(), const_cast<char*>(record.data())};
  return CheckAt(mdb_put(txn_, bank_->EntryDb(kind), &k, &v, flags), "writing", kind, key);
}

Status WriteTxn::MoveToHistory(Entry old) {
  old.superseded_generation = generation_;
  const std::string stored = EncodeEntry(old);
  auto hk = HistoryKey(old.kind, old.key(), old.revision);
  MDB_val k{hk.size(), hk.data()}, v{stored.size(), const_cast<char*>(stored.data())};
  changed_ = true;
  return CheckAt(mdb_put(txn_, bank_->history_db_, &k, &v, 0), "writing history of", old.kind, old.key());
}

Result<uint32_t> WriteTxn::LastRevisionInHistory(EntryKind kind, Key key) {
  // Only a removed key can be absent with history, so the search is skipped while no key was
  // ever removed (no history before this transaction, no Remove in it).
  uint32_t last_revision = 0;
  if (history_was_empty_ && !removed_in_txn_) return last_revision;
  auto hk = HistoryKey(kind, key, 0);
  MDB_cursor* cursor = nullptr;
  TB_RETURN_IF_ERROR(Check(mdb_cursor_open(txn_, bank_->history_db_, &cursor), "reading history"));
  MDB_val k{hk.size(), hk.data()}, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE); rc == 0 && std::memcmp(k.mv_data, hk.data(), 9) == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const auto* p = static_cast<const unsigned char*>(k.mv_data) + 9;
    last_revision = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
  }
  mdb_cursor_close(cursor);
  return last_revision;
}

Result<uint32_t> WriteTxn::AdmitNewKey(EntryKind kind, Key key, uint32_t revision, std::string_view descriptor) {
  // Revisions of a key never repeat, even after a remove and a re-add: continue after the
  // key's last revision in history.
  auto last_revision = LastRevisionInHistory(kind, key);
  if (!last_revision.ok()) return last_revision.status();
  if (kind == EntryKind::kOp && bank_->has_shape_index_)
    TB_RETURN_IF_ERROR(CheckAt(PutShapeIndexRow(txn_, bank_->shape_db_, ShapeClassKey(std::string(descriptor)), key),
                               "indexing", kind, key));
  changed_ = true;
  return std::max({revision, *last_revision + 1, 1u});
}

Result<EntryPeek> WriteTxn::PeekCurrent(std::string_view current, EntryKind kind, Key key, std::string_view descriptor) {
  // A peek at the stored value; it is decoded whole only when it is replaced.
  auto peek = PeekEntry(current, descriptor, /*with_rank=*/kind == EntryKind::kGrad);
  if (!peek.ok()) return peek.status().WithContext(EntryName(kind, key));
  if (!peek->same_descriptor)
    return Status::Refused("key collision: " + FormatKey(kind, key) +
                           " already holds another descriptor; the entry was not stored");
  return peek;
}

Result<PutOutcome> WriteTxn::Resolve(Entry incoming, PutPolicy policy, std::optional<std::string_view> current,
                                     std::string* record) {
  const Key key = incoming.key();
  incoming.generation = generation_;
  incoming.superseded_generation = 0;
  if (!current) {
    auto revision = AdmitNewKey(incoming.kind, key, incoming.revision, incoming.descriptor);
    if (!revision.ok()) return revision.status();
    incoming.revision = *revision;
    *record = EncodeEntry(incoming);
    return PutOutcome::kAdded;
  }
  auto held = PeekCurrent(*current, incoming.kind, key, incoming.descriptor);
  if (!held.ok()) return held.status();
  const bool replace = policy == PutPolicy::kOverwrite ||
                       (policy == PutPolicy::kKeepFaster && held->BeatenBy(RankOf(incoming), incoming.after.median_us));
  if (!replace) return PutOutcome::kKept;
  auto old = DecodeEntryAt(incoming.kind, key, *current);
  if (!old.ok()) return old.status();
  if (incoming.SameContent(*old)) return PutOutcome::kKept;  // nothing new
  TB_RETURN_IF_ERROR(MoveToHistory(*old));
  incoming.revision = old->revision + 1;
  *record = EncodeEntry(incoming);
  return PutOutcome::kUpdated;
}

std::string WriteTxn::LiveRecord(const EntryView& incoming, std::string_view incoming_stored, uint32_t revision) const {
  if (auto restamped = RestampStored(incoming_stored, generation_, revision)) return std::move(*restamped);
  Entry e = incoming.ToEntry();  // a bookkeeping field is not in the buffer: encode anew
  e.generation = generation_;
  e.revision = revision;
  e.superseded_generation = 0;
  return EncodeEntry(e);
}

Result<PutOutcome> WriteTxn::ResolveStored(EntryKind kind, Key key, const EntryView& incoming,
                                           std::string_view incoming_stored, std::optional<std::string_view> current,
                                           std::string* record) {
  if (!current) {
    auto revision = AdmitNewKey(kind, key, incoming.raw().revision(), incoming.descriptor());
    if (!revision.ok()) return revision.status();
    *record = LiveRecord(incoming, incoming_stored, *revision);
    return PutOutcome::kAdded;
  }
  auto held = PeekCurrent(*current, kind, key, incoming.descriptor());
  if (!held.ok()) return held.status();
  const int rank = kind == EntryKind::kGrad ? incoming.verification_rank() : 0;
  if (!held->BeatenBy(rank, incoming.after_us())) return PutOutcome::kKept;  // never the same content
  auto old = DecodeEntryAt(kind, key, *current);
  if (!old.ok()) return old.status();
  TB_RETURN_IF_ERROR(MoveToHistory(*old));
  *record = LiveRecord(incoming, incoming_stored, old->revision + 1);
  return PutOutcome::kUpdated;
}

Result<PutOutcome> WriteTxn::ResolveAndStore(EntryKind kind, Key key, const Resolver& resolve) {
  auto current = GetStored(kind, key);
  if (!current.ok()) return current.status();
  std::string record;
  auto outcome = resolve(*current, &record);
  if (!outcome.ok() || *outcome == PutOutcome::kKept) return outcome;
  TB_RETURN_IF_ERROR(PutRecord(kind, key, record, 0));
  return outcome;
}

Result<PutOutcome> WriteTxn::PutStored(EntryKind kind, Key key, const EntryView& incoming, std::string_view incoming_stored) {
  return ResolveAndStore(kind, key, [&](std::optional<std::string_view> current, std::string* record) {
    return ResolveStored(kind, key, incoming, incoming_stored, current, record);
  });
}

Result<PutOutcome> WriteTxn::Put(Entry incoming, PutPolicy policy) {
  const EntryKind kind = incoming.kind;
  const Key key = incoming.key();
  return ResolveAndStore(kind, key, [&](std::optional<std::string_view> current, std::string* record) {
    return Resolve(std::move(incoming), policy, current, record);
  });
}

Status WriteTxn::ClearForRewrite(EntryKind kind) {
  return Check(mdb_drop(txn_, bank_->EntryDb(kind), 0), std::string("emptying the ") + KindName(kind) + " table");
}

Status WriteTxn::AppendRecord(EntryKind kind, Key key, std::string_view record) {
  return PutRecord(kind, key, record, MDB_APPEND);
}

Result<bool> WriteTxn::Remove(EntryKind kind, Key key) {
  auto existing = Get(kind, key);
  if (!existing.ok()) return existing.status();
  if (!*existing) return false;
  removed_in_txn_ = true;
  TB_RETURN_IF_ERROR(MoveToHistory(**existing));
  KeyBytes kb = EncodeKey(key);
  MDB_val k{kb.size(), kb.data()};
  TB_RETURN_IF_ERROR(Check(mdb_del(txn_, bank_->EntryDb(kind), &k, nullptr), "removing " + FormatKey(kind, key)));
  if (kind == EntryKind::kOp && bank_->has_shape_index_) {
    KeyBytes cb = EncodeKey(ShapeClassKey((*existing)->descriptor));
    MDB_val ck{cb.size(), cb.data()}, cv{kb.size(), kb.data()};
    int rc = mdb_del(txn_, bank_->shape_db_, &ck, &cv);
    if (rc != MDB_NOTFOUND) TB_RETURN_IF_ERROR(Check(rc, "unindexing " + FormatKey(kind, key)));
  }
  return true;
}

Status WriteTxn::PutJob(std::string_view name, std::string_view bytes) {
  MDB_val k{name.size(), const_cast<char*>(name.data())}, v{bytes.size(), const_cast<char*>(bytes.data())};
  changed_ = true;
  return Check(mdb_put(txn_, bank_->jobs_db_, &k, &v, 0), "writing job " + std::string(name));
}

Result<std::optional<std::string>> WriteTxn::GetJob(std::string_view name) {
  std::optional<std::string_view> stored;
  int rc = GetRecord(txn_, bank_->jobs_db_, name, &stored);
  if (rc != MDB_NOTFOUND) TB_RETURN_IF_ERROR(Check(rc, "reading job " + std::string(name)));
  return stored ? std::optional<std::string>(*stored) : std::nullopt;
}

Status WriteTxn::SetMeta(std::string_view name, std::string_view value) {
  MDB_val k{name.size(), const_cast<char*>(name.data())}, v{value.size(), const_cast<char*>(value.data())};
  changed_ = true;
  return Check(mdb_put(txn_, bank_->meta_db_, &k, &v, 0), "writing meta " + std::string(name));
}

}  // namespace tilebank
