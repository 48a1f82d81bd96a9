#include "repo/bank.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "repo/bank_location.h"
#include "repo/entry_codec.h"
#include "repo/provenance.h"
#include "repo/records.h"

namespace tilebank {

namespace fs = std::filesystem;

namespace {

constexpr unsigned kMaxDbs = 8;

bool HasWriteBits(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0;
}

std::string RandomBankId() {
  std::random_device rd;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

Result<std::optional<std::string>> GetMetaField(MDB_txn* txn, MDB_dbi db, const char* name) {
  MDB_val k{std::strlen(name), const_cast<char*>(name)}, v;
  int rc = mdb_get(txn, db, &k, &v);
  if (rc == MDB_NOTFOUND) return std::optional<std::string>();
  if (rc != 0) return LmdbStatus(rc, std::string("reading meta ") + name);
  return std::optional<std::string>(std::string(static_cast<const char*>(v.mv_data), v.mv_size));
}

Result<BankMeta> ReadMetaIn(MDB_txn* txn, MDB_dbi db, const std::string& dir) {
  BankMeta m;
  auto field = [&](const char* name, std::string* out, bool required) -> Status {
    auto v = GetMetaField(txn, db, name);
    if (!v.ok()) return v.status();
    if (!*v) {
      if (required) return Status::Corrupt("bank at '" + dir + "' has no meta '" + name + "': not a tilebank bank?");
      return Status::Ok();
    }
    *out = **v;
    return Status::Ok();
  };
  std::string format, generation, created;
  TB_RETURN_IF_ERROR(field("format_version", &format, true));
  TB_RETURN_IF_ERROR(field("soc_version", &m.soc_version, true));
  TB_RETURN_IF_ERROR(field("generation", &generation, true));
  TB_RETURN_IF_ERROR(field("fingerprint", &m.fingerprint, false));
  TB_RETURN_IF_ERROR(field("bank_id", &m.bank_id, false));
  TB_RETURN_IF_ERROR(field("creator", &m.creator, false));
  TB_RETURN_IF_ERROR(field("created_unix_ms", &created, false));
  unsigned major = 0, minor = 0;
  char tail = 0;
  if (std::sscanf(format.c_str(), "%u.%u%c", &major, &minor, &tail) != 2)
    return Status::Corrupt("bank at '" + dir + "' has an unreadable format_version '" + format + "'");
  m.format_major = major;
  m.format_minor = minor;
  try {
    m.generation = std::stoull(generation);
    m.created_unix_ms = created.empty() ? 0 : std::stoll(created);
  } catch (...) {
    return Status::Corrupt("bank at '" + dir + "' has an unreadable generation '" + generation + "'");
  }
  return m;
}

Status PutMetaField(MDB_txn* txn, MDB_dbi db, std::string_view name, std::string_view value) {
  MDB_val k{name.size(), const_cast<char*>(name.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  int rc = mdb_put(txn, db, &k, &v, 0);
  return rc == 0 ? Status::Ok() : LmdbStatus(rc, "writing meta " + std::string(name));
}

}  // namespace

std::string FormatVersionString(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

Status LmdbStatus(int rc, const std::string& what) {
  std::string message = what + ": " + mdb_strerror(rc);
  if (rc == EACCES || rc == EROFS || rc == EPERM) return Status::Refused(message + " (the bank is read-only)");
  if (rc == MDB_CORRUPTED || rc == MDB_INVALID || rc == MDB_PAGE_NOTFOUND || rc == MDB_BAD_TXN)
    return Status::Corrupt(message);
  if (rc == ENOENT) return Status::NotFound(message);
  return Status::IoError(message);
}

Result<std::unique_ptr<Bank>> Bank::Open(const std::string& dir, const OpenOptions& options) {
  std::unique_ptr<Bank> bank(new Bank());
  bank->dir_ = dir;
  // A creator killed right after creating data.mdb leaves it empty. LMDB would then write its
  // first meta pages (EBADF on a read-only open): that is no bank yet, and a creator starts over.
  std::error_code size_ec;
  const bool has_data = IsBankDir(dir);
  const bool empty_data = has_data && fs::file_size(dir + "/data.mdb", size_ec) == 0 && !size_ec;
  const bool exists = has_data && !empty_data;
  const bool writable = options.mode != OpenMode::kReadOnly;
  if (!exists && options.mode != OpenMode::kCreateIfMissing)
    return Status::NotFound("no bank at '" + dir + "' (" +
                            (empty_data ? "an interrupted creation left an empty data.mdb; the next import or merge initializes it"
                                        : "no data.mdb there") + ")");
  if (!exists) {
    if (options.soc_version.empty()) return Status::InvalidInput("creating a bank needs a soc_version");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::Refused("cannot create bank directory '" + dir + "': " + ec.message());
  }
  // A bank whose directory or data file has no write permission bits is read-only for everyone,
  // root included, so a protected bank is never written by accident.
  if (writable && (!HasWriteBits(dir) || !HasWriteBits(dir + "/data.mdb") || ::access(dir.c_str(), W_OK) != 0))
    return Status::Refused("bank at '" + dir + "' is read-only (no write permission); nothing was written");

  int rc = mdb_env_create(&bank->env_);
  if (rc != 0) return LmdbStatus(rc, "creating LMDB environment");
  mdb_env_set_maxdbs(bank->env_, kMaxDbs);
  mdb_env_set_maxreaders(bank->env_, 256);
  if (!exists) mdb_env_set_mapsize(bank->env_, options.initial_map_bytes);
  unsigned flags = MDB_NOTLS | (writable ? 0 : MDB_RDONLY);
  rc = mdb_env_open(bank->env_, dir.c_str(), flags, 0664);
  if (rc == EACCES && !writable) {
    // A read-only copy whose lock file we cannot create: read without locking.
    mdb_env_close(bank->env_);
    mdb_env_create(&bank->env_);
    mdb_env_set_maxdbs(bank->env_, kMaxDbs);
    rc = mdb_env_open(bank->env_, dir.c_str(), MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK, 0664);
  }
  if (rc != 0) {
    mdb_env_close(bank->env_);
    bank->env_ = nullptr;
    return LmdbStatus(rc, "opening bank at '" + dir + "'");
  }
  int dead = 0;
  mdb_reader_check(bank->env_, &dead);  // clears reader slots of killed processes
  // A creator killed between creating data.mdb and committing its first transaction leaves an
  // environment with no databases: that is no bank yet, and the next creator initializes it.
  bool initialized = exists;
  if (exists) {
    MDB_txn* probe = nullptr;
    TB_RETURN_IF_ERROR(bank->BeginRead(&probe));
    MDB_stat main_db{};
    mdb_stat(probe, 1, &main_db);  // 1 is LMDB's main database, which lists the named ones
    mdb_txn_abort(probe);
    initialized = main_db.ms_entries > 0;
  }
  if (!initialized && options.mode != OpenMode::kCreateIfMissing)
    return Status::NotFound("no bank at '" + dir + "' (an interrupted creation left an empty environment; the next import or merge initializes it)");
  if (!initialized) {
    TB_RETURN_IF_ERROR(bank->InitializeNew(options));
  } else {
    TB_RETURN_IF_ERROR(bank->OpenDatabases());
  }

  MDB_txn* txn = nullptr;
  TB_RETURN_IF_ERROR(bank->BeginRead(&txn));
  auto meta = ReadMetaIn(txn, bank->meta_db_, dir);
  mdb_txn_abort(txn);
  if (!meta.ok()) return meta.status();
  bank->meta_ = *meta;
  const BankMeta& m = bank->meta_;
  const std::string ours = FormatVersionString(kFormatMajor, kFormatMinor);
  const std::string theirs = FormatVersionString(m.format_major, m.format_minor);
  if (m.format_major > kFormatMajor || (m.format_major == kFormatMajor && m.format_minor > kFormatMinor))
    return Status::Refused("bank at '" + dir + "' has format " + theirs + ", newer than this tool's " + ours +
                           ": use a newer tilebank");
  if (m.format_major < kFormatMajor)
    return Status::Refused("bank at '" + dir + "' has format " + theirs + ", which this tool cannot read or upgrade");
  if (writable && m.format_minor < kFormatMinor && !options.allow_older_format)
    return Status::Refused("bank at '" + dir + "' has the older format " + theirs + "; run `tilebank bank upgrade` before writing to it");
  if (!options.soc_version.empty() && m.soc_version != options.soc_version)
    return Status::Refused("bank at '" + dir + "' is for soc_version " + m.soc_version + ", not " + options.soc_version);
  return bank;
}

Bank::~Bank() {
  for (MDB_txn* txn : read_pool_) mdb_txn_abort(txn);
  if (env_) mdb_env_close(env_);
}

Status Bank::AcquireRead(MDB_txn** txn) const {
  {
    std::lock_guard<std::mutex> lock(read_pool_mutex_);
    if (!read_pool_.empty()) {
      *txn = read_pool_.back();
      read_pool_.pop_back();
    }
  }
  if (*txn) {
    if (mdb_txn_renew(*txn) == 0) return Status::Ok();
    mdb_txn_abort(*txn);  // e.g. the map was resized by another process: start afresh
    *txn = nullptr;
  }
  return BeginRead(txn);
}

void Bank::ReleaseRead(MDB_txn* txn) const {
  mdb_txn_reset(txn);
  std::lock_guard<std::mutex> lock(read_pool_mutex_);
  read_pool_.push_back(txn);
}

namespace {
struct NamedDb {
  const char* name;
  unsigned flags;
  bool optional;  // absent in older formats
};
constexpr NamedDb kNamedDbs[] = {{"meta", 0, false},    {"op", 0, false},      {"graph", 0, false},
                                 {"grad", 0, false},    {"history", 0, false}, {"jobs", 0, false},
                                 {"shape_class", MDB_DUPSORT | MDB_DUPFIXED, true}};
}  // namespace

MDB_dbi* Bank::DbHandle(int index) {
  MDB_dbi* handles[] = {&meta_db_, &entry_db_[0], &entry_db_[1], &entry_db_[2], &history_db_, &jobs_db_, &shape_db_};
  return handles[index];
}

Status Bank::OpenDatabasesIn(MDB_txn* txn, unsigned extra_flags) {
  for (int i = 0; i < static_cast<int>(std::size(kNamedDbs)); ++i) {
    const NamedDb& db = kNamedDbs[i];
    int rc = mdb_dbi_open(txn, db.name, extra_flags | db.flags, DbHandle(i));
    if (rc == MDB_NOTFOUND && db.optional) continue;
    if (rc == MDB_NOTFOUND)
      return Status::Corrupt("bank at '" + dir_ + "' lacks the '" + db.name + "' database: not a tilebank bank?");
    if (rc != 0) return LmdbStatus(rc, std::string("opening database ") + db.name + " in '" + dir_ + "'");
    if (i == 6) has_shape_index_ = true;
  }
  return Status::Ok();
}

Status Bank::OpenDatabases() {
  MDB_txn* txn = nullptr;
  TB_RETURN_IF_ERROR(BeginRead(&txn));
  Status s = OpenDatabasesIn(txn, 0);
  if (!s.ok()) {
    mdb_txn_abort(txn);
    return s;
  }
  int rc = mdb_txn_commit(txn);  // keeps the handles open
  return rc == 0 ? Status::Ok() : LmdbStatus(rc, "opening bank at '" + dir_ + "'");
}

// Creates the databases and the meta record in one transaction, so a bank is either whole or
// absent. A concurrent creator may have done it first: then nothing is written.
Status Bank::InitializeNew(const OpenOptions& options) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (rc != 0) return LmdbStatus(rc, "creating bank at '" + dir_ + "'");
  Status s = OpenDatabasesIn(txn, MDB_CREATE);
  auto existing = s.ok() ? GetMetaField(txn, meta_db_, "format_version") : Result<std::optional<std::string>>(s);
  if (!existing.ok() || *existing) {
    mdb_txn_abort(txn);
    return existing.ok() ? OpenDatabases() : existing.status();
  }
  const std::string creator = std::string("tilebank ") + TILEBANK_VERSION + " on " + HostName();
  for (auto& [name, value] : {std::pair<const char*, std::string>{"format_version", FormatVersionString(kFormatMajor, kFormatMinor)},
                              {"soc_version", options.soc_version},
                              {"fingerprint", options.fingerprint},
                              {"bank_id", RandomBankId()},
                              {"creator", creator},
                              {"created_unix_ms", std::to_string(NowUnixMs())},
                              {"generation", "0"}})
    if (s.ok()) s = PutMetaField(txn, meta_db_, name, value);
  if (!s.ok()) {
    mdb_txn_abort(txn);
    return s;
  }
  rc = mdb_txn_commit(txn);
  return rc == 0 ? Status::Ok() : LmdbStatus(rc, "creating bank at '" + dir_ + "'");
}

Status Bank::BeginRead(MDB_txn** txn) const {
  int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, txn);
  if (rc == MDB_MAP_RESIZED) {  // another process grew the map
    mdb_env_set_mapsize(env_, 0);
    rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, txn);
  }
  return rc == 0 ? Status::Ok() : LmdbStatus(rc, "reading bank at '" + dir_ + "'");
}

Result<Snapshot> Bank::Read() const {
  MDB_txn* txn = nullptr;
  TB_RETURN_IF_ERROR(BeginRead(&txn));
  auto meta = ReadMetaIn(txn, meta_db_, dir_);
  if (!meta.ok()) {
    mdb_txn_abort(txn);
    return meta.status();
  }
  return Snapshot(this, txn, *meta);
}

Result<bool> Bank::FindView(EntryKind kind, std::string_view canonical_descriptor, EntryView* view) const {
  MDB_txn* txn = nullptr;
  TB_RETURN_IF_ERROR(AcquireRead(&txn));
  const Key key = KeyOfDescriptor(canonical_descriptor);
  std::optional<std::string_view> stored;
  int rc = GetRecord(txn, EntryDb(kind), key, &stored);
  Result<bool> result = false;
  if (rc == 0) {
    Status s = view->Reset(*stored);
    if (!s.ok()) result = s.WithContext(EntryName(kind, key));
    else result = view->descriptor() == canonical_descriptor;  // a collision is a miss
  } else if (rc != MDB_NOTFOUND) {
    result = LmdbStatus(rc, "reading bank at '" + dir_ + "'");
  }
  ReleaseRead(txn);
  return result;
}

Result<std::optional<Entry>> Bank::Find(EntryKind kind, std::string_view canonical_descriptor) const {
  EntryView view;
  auto found = FindView(kind, canonical_descriptor, &view);
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<Entry>();
  return std::optional<Entry>(view.ToEntry());
}

Status Bank::Write(const std::function<Status(WriteTxn&)>& body, bool commit) {
  for (;;) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc == MDB_MAP_RESIZED) {  // another process grew the map
      mdb_env_set_mapsize(env_, 0);
      rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    }
    if (rc != 0) return LmdbStatus(rc, "writing bank at '" + dir_ + "'");
    auto meta = ReadMetaIn(txn, meta_db_, dir_);
    if (!meta.ok()) {
      mdb_txn_abort(txn);
      return meta.status();
    }
    WriteTxn w(this, txn, *meta);
    Status s = body(w);
    if (s.ok() && w.changed_) s = PutMetaField(txn, meta_db_, "generation", std::to_string(w.generation_));
    bool map_full = w.map_full_;
    if (!s.ok() || !w.changed_ || !commit) {
      mdb_txn_abort(txn);
      if (!map_full) return s;
    } else {
      rc = mdb_txn_commit(txn);
      if (rc == 0) {
        meta_.generation = w.generation_;
        return Status::Ok();
      }
      if (rc != MDB_MAP_FULL) return LmdbStatus(rc, "committing to bank at '" + dir_ + "'");
    }
    // The map is full: double it and run the body again.
    MDB_envinfo info;
    mdb_env_info(env_, &info);
    rc = mdb_env_set_mapsize(env_, info.me_mapsize * 2);
    if (rc != 0) return LmdbStatus(rc, "growing the map of bank at '" + dir_ + "'");
  }
}

Status Bank::CopyTo(const std::string& new_dir, bool compact) const {
  std::error_code ec;
  if (IsBankDir(new_dir)) return Status::Refused("'" + new_dir + "' already holds a bank; nothing was copied");
  fs::create_directories(new_dir, ec);
  if (ec) return Status::Refused("cannot create '" + new_dir + "': " + ec.message());
  int rc = mdb_env_copy2(env_, new_dir.c_str(), compact ? MDB_CP_COMPACT : 0);
  if (rc != 0) {
    fs::remove(fs::path(new_dir) / "data.mdb", ec);
    return LmdbStatus(rc, "copying bank to '" + new_dir + "'");
  }
  return Status::Ok();
}

}  // namespace tilebank
