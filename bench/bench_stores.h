// What the store benchmarks (bank_bench, batch_merge_bench) share: opening the stores they
// compare, SQLite's import and merge statements, and their command-line and directory rules.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "repo/bank.h"

namespace tilebank::bench {

// Prints "PROGRAM: what" on stderr and exits 2.
[[noreturn]] void Die(const std::string& what);
void Check(const Status& s, const char* what);
void CheckSql(int rc, sqlite3* db, const char* what);

// SQLite at its best case for this workload: mmap on (4 GiB) and a 256 MiB page cache.
sqlite3* OpenSqlite(const std::string& path);
// The table is op(key INTEGER PRIMARY KEY, descriptor, after_us, value); keep-faster on a repeat.
void SqliteImport(sqlite3* db, const std::vector<Entry>& entries);
// Merges the table of the SQLite file `source` into `db` with the bank's keep-faster rule, in
// one transaction.
void SqliteMerge(sqlite3* db, const std::string& source);

std::unique_ptr<Bank> OpenBankAt(const std::string& dir, OpenMode mode, const std::string& soc);

// A positive count given on the command line (dies naming `flag` otherwise).
uint64_t PositiveArgument(const std::string& flag, const std::string& text);
// The working directory: a new one under $TMPDIR, or `given`, which must be empty or missing (the
// benchmark fills it and leaves the data there; it never removes what it did not write).
std::string WorkDirectory(const std::string& given);
uint64_t FileBytes(const std::string& path);

}  // namespace tilebank::bench
