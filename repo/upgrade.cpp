// Bank::Upgrade: brings a bank of an older minor format to the current one, in one transaction.
// Format history: 1.0 had no shape_class index; 1.1 adds it (nearest-shape fallback).
#include "repo/bank.h"
#include "repo/entry_codec.h"
#include "repo/records.h"

namespace tilebank {

Status Bank::Upgrade(std::string* what_was_done) {
  const BankMeta before = meta_at_open();
  if (before.format_major == kFormatMajor && before.format_minor == kFormatMinor) {
    *what_was_done = "already at format " + FormatVersionString(kFormatMajor, kFormatMinor) + "; nothing to do";
    return Status::Ok();
  }
  Status s = Write([&](WriteTxn& txn) -> Status {
    int rc = mdb_dbi_open(txn.txn(), "shape_class", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &shape_db_);
    if (rc != 0) return LmdbStatus(rc, "creating the shape index");
    rc = mdb_drop(txn.txn(), shape_db_, 0);
    if (rc != 0) return LmdbStatus(rc, "emptying the shape index");
    MDB_cursor* cursor = nullptr;
    rc = mdb_cursor_open(txn.txn(), EntryDb(EntryKind::kOp), &cursor);
    if (rc != 0) return LmdbStatus(rc, "reading op entries");
    MDB_val k, v;
    Status st;
    for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0 && st.ok(); rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      auto entry = DecodeEntry({static_cast<const char*>(v.mv_data), v.mv_size});
      if (!entry.ok()) {
        st = entry.status().WithContext("op entry " + FormatKey(EntryKind::kOp, DecodeKey(k.mv_data)) +
                                        " (fix or remove it, then upgrade again)");
        break;
      }
      int prc = PutShapeIndexRow(txn.txn(), shape_db_, ShapeClassKey(entry->descriptor), DecodeKey(k.mv_data));
      if (prc != 0) st = LmdbStatus(prc, "building the shape index");
    }
    mdb_cursor_close(cursor);
    TB_RETURN_IF_ERROR(st);
    return txn.SetMeta("format_version", FormatVersionString(kFormatMajor, kFormatMinor));
  });
  if (!s.ok()) return s;
  has_shape_index_ = true;
  meta_.format_major = kFormatMajor;
  meta_.format_minor = kFormatMinor;
  *what_was_done = "upgraded from format " + FormatVersionString(before.format_major, before.format_minor) + " to " +
                   FormatVersionString(kFormatMajor, kFormatMinor) + " (built the shape index)";
  return Status::Ok();
}

}  // namespace tilebank
