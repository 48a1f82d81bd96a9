#include "bench/bench_stores.h"

#include <errno.h>
#include <stdlib.h>

#include <charconv>
#include <cstdio>
#include <filesystem>

#include "engine/core/host_bank.h"
#include "repo/entry_codec.h"

namespace fs = std::filesystem;

namespace tilebank::bench {

void Die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(2);
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.message());
}

void CheckSql(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) Die(std::string(what) + ": " + sqlite3_errmsg(db));
}

sqlite3* OpenSqlite(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("sqlite open " + path);
  CheckSql(sqlite3_exec(db, "PRAGMA mmap_size=4294967296; PRAGMA cache_size=-262144;", nullptr, nullptr, nullptr), db, "pragma");
  return db;
}

void SqliteImport(sqlite3* db, const std::vector<Entry>& entries) {
  CheckSql(sqlite3_exec(db,
                        "CREATE TABLE IF NOT EXISTS op(key INTEGER PRIMARY KEY, descriptor TEXT NOT NULL, "
                        "after_us REAL NOT NULL, value BLOB NOT NULL); BEGIN;",
                        nullptr, nullptr, nullptr),
           db, "create");
  sqlite3_stmt* insert = nullptr;
  CheckSql(sqlite3_prepare_v2(db,
                              "INSERT INTO op VALUES(?1, ?2, ?3, ?4) ON CONFLICT(key) DO UPDATE SET "
                              "descriptor=excluded.descriptor, after_us=excluded.after_us, value=excluded.value "
                              "WHERE excluded.after_us < op.after_us",
                              -1, &insert, nullptr),
           db, "prepare insert");
  for (const Entry& e : entries) {
    const std::string value = EncodeEntry(e);
    sqlite3_bind_int64(insert, 1, static_cast<sqlite3_int64>(e.key()));
    sqlite3_bind_text(insert, 2, e.descriptor.data(), static_cast<int>(e.descriptor.size()), SQLITE_STATIC);
    sqlite3_bind_double(insert, 3, e.after.median_us);
    sqlite3_bind_blob(insert, 4, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    CheckSql(sqlite3_step(insert), db, "insert");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  CheckSql(sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr), db, "commit");
}

void SqliteMerge(sqlite3* db, const std::string& source) {
  const std::string sql = "ATTACH '" + source +
                          "' AS b; BEGIN; INSERT INTO op SELECT * FROM b.op WHERE true "
                          "ON CONFLICT(key) DO UPDATE SET descriptor=excluded.descriptor, after_us=excluded.after_us, "
                          "value=excluded.value WHERE excluded.after_us < op.after_us; COMMIT; DETACH b;";
  CheckSql(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), db, "sqlite merge");
}

std::unique_ptr<Bank> OpenBankAt(const std::string& dir, OpenMode mode, const std::string& soc) {
  auto bank = OpenBankOnHost(dir, mode, soc);
  if (!bank.ok()) Die(bank.status().message());
  return std::move(*bank);
}

uint64_t PositiveArgument(const std::string& flag, const std::string& text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0)
    Die(flag + " " + text + ": expected a positive whole number");
  return value;
}

std::string WorkDirectory(const std::string& given) {
  if (given.empty()) {
    std::string pattern = (fs::temp_directory_path() / "tilebank-bench.XXXXXX").string();
    if (!mkdtemp(pattern.data())) Die("cannot create a directory under " + fs::temp_directory_path().string());
    return pattern;
  }
  std::error_code ec;
  if (fs::exists(given, ec) && !(fs::is_directory(given, ec) && fs::is_empty(given, ec)))
    Die("--dir " + given + " exists and is not an empty directory; give a new or empty one (nothing was removed)");
  if (ec) Die("--dir " + given + ": " + ec.message());
  fs::create_directories(given, ec);
  if (ec) Die("--dir " + given + ": " + ec.message());
  return given;
}

uint64_t FileBytes(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

}  // namespace tilebank::bench
