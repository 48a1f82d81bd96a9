// The knowledge bank: one LMDB environment for one soc_version.
//
// Named databases: meta (format version, soc_version, fingerprint, generation, creator, bank id),
// op / graph / grad (entries by 8-byte big-endian key), history (superseded revisions, keyed by
// kind byte + key + 4-byte revision), jobs (tuning checkpoints), shape_class (op entries grouped by
// their descriptor with shapes replaced by ranks, for nearest-shape fallback).
//
// Readers never block; writers serialize on LMDB's writer lock. Every committed write that
// changes something bumps the generation by one. A Bank may be used from several threads for
// reads; writes come from one thread at a time.
#pragma once
#include <lmdb.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>
#include <optional>
#include <string>
#include <string_view>

#include "repo/canonical.h"
#include "repo/entry.h"
#include "repo/entry_view.h"

namespace tilebank {

inline constexpr uint32_t kFormatMajor = 1;
inline constexpr uint32_t kFormatMinor = 1;
std::string FormatVersionString(uint32_t major, uint32_t minor);

struct BankMeta {
  uint32_t format_major = kFormatMajor;
  uint32_t format_minor = kFormatMinor;
  std::string soc_version;
  std::string fingerprint;  // what the soc_version stands for (CPU model, flags digest, ...)
  std::string bank_id;      // random, fixed at creation: names the bank in provenance
  std::string creator;      // tool and host that created it
  int64_t created_unix_ms = 0;
  uint64_t generation = 0;
};

enum class OpenMode { kReadOnly, kReadWrite, kCreateIfMissing };

struct OpenOptions {
  OpenMode mode = OpenMode::kReadOnly;
  std::string soc_version;              // when set, the bank must be of this soc_version (required to create)
  std::string fingerprint;              // recorded at creation
  size_t initial_map_bytes = size_t{1} << 30;  // virtual reservation; the map doubles when full
  bool allow_older_format = false;      // for `upgrade`: open a writable bank of an older minor format
};

class Snapshot;
class WriteTxn;
struct EntryPeek;

// A kind's records in ascending key order, read one at a time; lives within its Snapshot.
class RecordCursor {
 public:
  RecordCursor(RecordCursor&& other) noexcept;
  ~RecordCursor();
  bool valid() const { return valid_; }
  Key key() const { return key_; }
  std::string_view record() const { return record_; }
  // Moves to the next record; after the last one valid() is false.
  Status Next();

 private:
  friend class Snapshot;
  RecordCursor(MDB_cursor* cursor, EntryKind kind) : cursor_(cursor), kind_(kind) {}
  Status Load(int rc, const MDB_val& k, const MDB_val& v);
  MDB_cursor* cursor_;
  EntryKind kind_;
  bool valid_ = false;
  Key key_ = 0;
  std::string_view record_;
};

class Bank {
 public:
  // Refuses (kRefused) a bank of a newer format, of another soc_version than asked for, or a
  // read-only directory opened for writing; kNotFound when there is no bank and mode doesn't create.
  static Result<std::unique_ptr<Bank>> Open(const std::string& dir, const OpenOptions& options);
  ~Bank();
  Bank(const Bank&) = delete;
  Bank& operator=(const Bank&) = delete;

  const std::string& dir() const { return dir_; }
  const BankMeta& meta_at_open() const { return meta_; }
  bool has_shape_index() const { return has_shape_index_; }

  // A consistent read view of the whole bank (one LMDB read transaction).
  Result<Snapshot> Read() const;

  // The fast path for runtimes: the entry for this descriptor, or nullopt. Compares the stored
  // descriptor, so a hash collision never returns another operator's policy.
  Result<std::optional<Entry>> Find(EntryKind kind, std::string_view canonical_descriptor) const;
  // The same lookup without copying the entry out: on true, `view` shows the checked entry.
  Result<bool> FindView(EntryKind kind, std::string_view canonical_descriptor, EntryView* view) const;

  // Runs `body` in one write transaction and commits when it returns Ok. The body may run more
  // than once (the map grows and the body reruns when the map is full), so it must start from
  // scratch each time. Nothing is written when it returns an error.
  // With `commit` false the transaction is always aborted (a dry run).
  Status Write(const std::function<Status(WriteTxn&)>& body, bool commit = true);

  // Drops this process's mappings of the data file's pages; they stay in the page cache and map
  // back in on the next read. A long scan (a merge) calls it now and then so that its resident
  // set stays near the memory it allocates. Records read before stay valid.
  void ReleaseMappedPages() const;

  // LMDB's copy (consistent while writers run); `compact` omits free pages.
  Status CopyTo(const std::string& new_dir, bool compact) const;

  // Rebuilds derived data and stamps the current format (used by `upgrade`).
  Status Upgrade(std::string* what_was_done);

  MDB_env* env() const { return env_; }

 private:
  friend class Snapshot;
  friend class WriteTxn;
  Bank() = default;
  Status OpenDatabases();
  Status OpenDatabasesIn(MDB_txn* txn, unsigned extra_flags);
  Status InitializeNew(const OpenOptions& options);
  MDB_dbi* DbHandle(int index);
  Status BeginRead(MDB_txn** txn) const;
  // Reset read transactions kept for reuse by Find (the env runs with MDB_NOTLS, so a reset
  // transaction may be renewed on any thread).
  Status AcquireRead(MDB_txn** txn) const;
  void ReleaseRead(MDB_txn* txn) const;
  mutable std::mutex read_pool_mutex_;
  mutable std::vector<MDB_txn*> read_pool_;

  std::string dir_;
  MDB_env* env_ = nullptr;
  BankMeta meta_;
  bool has_shape_index_ = false;
  MDB_dbi meta_db_ = 0, history_db_ = 0, jobs_db_ = 0, shape_db_ = 0;
  MDB_dbi entry_db_[3] = {0, 0, 0};

  MDB_dbi EntryDb(EntryKind kind) const { return entry_db_[static_cast<int>(kind)]; }
};

// A read transaction. Values handed out as string_view live as long as the Snapshot.
class Snapshot {
 public:
  Snapshot(Snapshot&& other) noexcept;
  ~Snapshot();

  const BankMeta& meta() const { return meta_; }
  Result<std::optional<std::string_view>> GetStored(EntryKind kind, Key key) const;
  Result<std::optional<Entry>> Get(EntryKind kind, Key key) const;
  // Visits every entry of a kind in key order; a non-ok Status from `visit` stops and is returned.
  Status ForEach(EntryKind kind, const std::function<Status(Key, std::string_view stored)>& visit) const;
  // Visits superseded revisions, in (kind, key, revision) order; `only_key` limits to one key.
  Status ForEachHistory(const std::function<Status(EntryKind, Key, uint32_t revision, std::string_view stored)>& visit,
                        std::optional<std::pair<EntryKind, Key>> only_key = std::nullopt) const;
  // Keys of op entries whose shape class is `shape_class` (see ShapeClassOf).
  Status ForEachInShapeClass(std::string_view shape_class, const std::function<Status(Key)>& visit) const;
  // Every (shape class hash, key) pair of the index, for validation.
  Status ForEachShapeIndexRow(const std::function<Status(uint64_t, Key)>& visit) const;
  size_t Count(EntryKind kind) const;
  size_t HistoryCount() const;
  // A cursor on the kind's first record.
  Result<RecordCursor> Records(EntryKind kind) const;
  // A job checkpoint (WriteTxn::PutJob) as this view sees it; nullopt when there is none.
  Result<std::optional<std::string>> GetJob(std::string_view name) const;
  MDB_txn* txn() const { return txn_; }

 private:
  friend class Bank;
  Snapshot(const Bank* bank, MDB_txn* txn, BankMeta meta) : bank_(bank), txn_(txn), meta_(std::move(meta)) {}
  const Bank* bank_;
  MDB_txn* txn_;
  BankMeta meta_;
};

enum class PutPolicy { kKeepFaster, kOverwrite, kKeepExisting };
Result<PutPolicy> ParsePutPolicy(std::string_view name);  // keep-faster, overwrite, keep-existing

enum class PutOutcome { kAdded, kUpdated, kKept };

// What a write did, per kind of entry.
struct WriteCounts {
  size_t added[3] = {0, 0, 0};
  size_t updated[3] = {0, 0, 0};
  size_t kept[3] = {0, 0, 0};
  void Count(EntryKind kind, PutOutcome outcome) {
    int i = static_cast<int>(kind);
    (outcome == PutOutcome::kAdded ? added : outcome == PutOutcome::kUpdated ? updated : kept)[i]++;
  }
};

class WriteTxn {
 public:
  // The generation this transaction commits as.
  uint64_t generation() const { return generation_; }
  const BankMeta& meta() const { return meta_; }
  bool changed() const { return changed_; }

  Result<std::optional<Entry>> Get(EntryKind kind, Key key);
  // The number of entries of a kind, as this transaction sees them.
  size_t Count(EntryKind kind) const;
  // Stores `incoming` under its descriptor's key, deciding against any existing entry by
  // `policy` (keep-faster: strictly faster median wins, ties keep the existing one). A replaced
  // entry moves to history. An identical entry counts as kept and writes nothing.
  Result<PutOutcome> Put(Entry incoming, PutPolicy policy);
  // Put's decision against `current` (the record the caller holds for the key, nullopt when
  // none), with Put's side writes (a replaced record to history, an added op to the shape
  // index) but not the record itself: on added or updated, `record` receives the bytes to store.
  Result<PutOutcome> Resolve(Entry incoming, PutPolicy policy, std::optional<std::string_view> current,
                             std::string* record);
  // Put and Resolve with keep-faster for a value read from another bank (a merge source):
  // `incoming` views `incoming_stored`, checked, stored under `key` of `kind`. The same decisions,
  // but the value is copied with its bookkeeping restamped (RestampStored) instead of being
  // decoded and encoded again.
  Result<PutOutcome> PutStored(EntryKind kind, Key key, const EntryView& incoming, std::string_view incoming_stored);
  Result<PutOutcome> ResolveStored(EntryKind kind, Key key, const EntryView& incoming, std::string_view incoming_stored,
                                   std::optional<std::string_view> current, std::string* record);
  // Rewriting a kind's table in key order (the merge of large banks): ClearForRewrite empties
  // the table, whose records stay readable in a Snapshot begun before it; AppendRecord then puts
  // records back in strictly ascending key order, filling pages with no search and no split.
  Status ClearForRewrite(EntryKind kind);
  Status AppendRecord(EntryKind kind, Key key, std::string_view record);
  // Moves an entry to history and removes it; false when absent.
  Result<bool> Remove(EntryKind kind, Key key);
  // Job checkpoints (opaque bytes under a job name).
  Status PutJob(std::string_view name, std::string_view bytes);
  Result<std::optional<std::string>> GetJob(std::string_view name);
  Status SetMeta(std::string_view name, std::string_view value);
  MDB_txn* txn() const { return txn_; }

 private:
  friend class Bank;
  WriteTxn(Bank* bank, MDB_txn* txn, BankMeta meta)
      : bank_(bank), txn_(txn), meta_(std::move(meta)), generation_(meta_.generation + 1) {
    MDB_stat history{};
    history_was_empty_ = mdb_stat(txn, bank->history_db_, &history) == 0 && history.ms_entries == 0;
  }
  Status Check(int rc, const std::string& what);
  // Check, naming "WHAT <kind key>" on an error.
  Status CheckAt(int rc, const char* what, EntryKind kind, Key key);
  Result<std::optional<std::string_view>> GetStored(EntryKind kind, Key key);
  Status PutRecord(EntryKind kind, Key key, std::string_view record, unsigned flags);
  Result<uint32_t> LastRevisionInHistory(EntryKind kind, Key key);
  // A key the table lacks is being added: its revision (after any in history), its shape-index row.
  Result<uint32_t> AdmitNewKey(EntryKind kind, Key key, uint32_t revision, std::string_view descriptor);
  // The time and rank of the record held for a key; kRefused when it holds another descriptor.
  Result<EntryPeek> PeekCurrent(std::string_view current, EntryKind kind, Key key, std::string_view descriptor);
  // Put's steps around a decision: the key's current record in, the decided record stored.
  using Resolver = std::function<Result<PutOutcome>(std::optional<std::string_view> current, std::string* record)>;
  Result<PutOutcome> ResolveAndStore(EntryKind kind, Key key, const Resolver& resolve);
  // The live record of this transaction for a checked value from another bank.
  std::string LiveRecord(const EntryView& incoming, std::string_view incoming_stored, uint32_t revision) const;
  Status MoveToHistory(Entry old);

  Bank* bank_;
  MDB_txn* txn_;
  BankMeta meta_;
  uint64_t generation_;
  bool changed_ = false;
  bool map_full_ = false;
  bool history_was_empty_ = false;  // at the start of this transaction
  bool removed_in_txn_ = false;
};

// An LMDB return code as a Status naming `what` failed.
Status LmdbStatus(int rc, const std::string& what);

}  // namespace tilebank
