// The merge that ends every batch, against SQLite's, side by side in one run: bank B (N entries,
// half of them A's keys with other times) merged into a copy of bank A with the bank's
// keep-faster rule, and the same rows merged into a copy of an indexed SQLite table (bank_bench's
// anchor, `INSERT ... SELECT ... ON CONFLICT DO UPDATE WHERE faster`).
//
// Each merge runs in a child process of its own, so what is measured is the merge alone: its wall
// time, and its peak memory (the kernel's peak resident set of the child, and the peaks of its
// anonymous and file-backed parts, sampled every 5 ms). A merge node needs the anonymous part;
// file-backed pages are the page cache's, which the kernel takes back under pressure.
//
//   build/batch_merge_bench [--entries N] [--repeats R] [--dir DIR]
// DIR must be new or empty, and the data stays there; without it the run works in a directory of
// its own under $TMPDIR and removes it at the end.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_data.h"
#include "bench/bench_stores.h"
#include "engine/core/soc_version.h"
#include "repo/jsonl.h"
#include "repo/merge.h"

using namespace tilebank;
using namespace tilebank::bench;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Writes entries [first, first + n) of `seed` to a new bank and a new SQLite file, each in one
// transaction, as bank_bench imports them.
void BuildStores(const std::string& bank_dir, const std::string& sqlite_path, uint64_t first, uint64_t n, uint32_t seed,
                 const std::string& soc) {
  std::vector<Entry> entries;
  entries.reserve(n);
  for (uint64_t i = first; i < first + n; ++i) entries.push_back(SyntheticEntry(i, seed));
  auto bank = OpenBankAt(bank_dir, OpenMode::kCreateIfMissing, soc);
  Check(ImportEntries(*bank, entries, PutPolicy::kKeepFaster).status(), "import");
  sqlite3* db = OpenSqlite(sqlite_path);
  SqliteImport(db, entries);
  sqlite3_close(db);
}

struct ChildRun {
  double seconds = 0;
  long peak_rss_mib = 0;   // the kernel's high-water mark of the child's resident set (VmHWM)
  long peak_anon_mib = 0;  // sampled peaks of its anonymous and file-backed parts
  long peak_file_mib = 0;
  std::string report;  // what the child wrote to its pipe
};

// Reads "RssAnon:" and "RssFile:" (kB) from /proc/PID/status; false once the process is gone.
bool SampleRss(pid_t pid, long* anon_kib, long* file_kib) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    if (line.rfind("RssAnon:", 0) == 0) *anon_kib = std::atol(line.c_str() + 8), any = true;
    if (line.rfind("RssFile:", 0) == 0) *file_kib = std::atol(line.c_str() + 8);
  }
  return any;
}

// Runs this program again as `--merge-child STORE DIR` (a fresh process, so nothing of the
// parent's heap is counted) and measures it. The child writes its report to stdout; a child that
// fails stops the benchmark.
ChildRun RunMergeChild(const char* store, const std::string& dir) {
  int fds[2];
  if (pipe(fds) != 0) Die("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  char* const child_argv[] = {const_cast<char*>("batch_merge_bench"), const_cast<char*>("--merge-child"),
                              const_cast<char*>(store), const_cast<char*>(dir.c_str()), nullptr};
  ::sync();  // the copies made for this run reach the disk before the clock starts
  const auto start = Clock::now();
  // posix_spawn, not fork: a forked child's resident set (and its high-water mark, which exec
  // keeps) would count the parent's pages until it execs.
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, child_argv, environ) != 0) Die("posix_spawn");
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  ChildRun run;
  long anon = 0, file = 0;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) Die("waitpid");
    if (SampleRss(pid, &anon, &file)) {
      run.peak_anon_mib = std::max(run.peak_anon_mib, anon / 1024);
      run.peak_file_mib = std::max(run.peak_file_mib, file / 1024);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  char buf[512];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) run.report.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    Die(std::string("the ") + store + " merge failed in its child process: " + run.report);
  const size_t newline = run.report.find('\n');
  run.peak_rss_mib = std::atol(run.report.c_str()) / 1024;
  run.report = newline == std::string::npos ? "" : run.report.substr(newline + 1);
  return run;
}

// This process's peak resident set (VmHWM), in KiB.
long PeakRssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// The child: merges B into DIR/merged (the bank) or DIR/merged.sqlite. It prints its peak
// resident set on the first line (ru_maxrss would not do: a spawned child's counts its parent's
// before the exec), then what it merged.
int MergeChild(const std::string& store, const std::string& dir, const std::string& soc) {
  std::string report;
  if (store == "sqlite") {
    sqlite3* db = OpenSqlite(dir + "/merged.sqlite");
    SqliteMerge(db, dir + "/b.sqlite");
    sqlite3_close(db);
  } else {
    auto merged = OpenBankAt(dir + "/merged", OpenMode::kReadWrite, soc);
    auto source = OpenBankAt(dir + "/bank_b", OpenMode::kReadOnly, soc);
    auto counts = MergeInto(*merged, {source.get()}, false);
    Check(counts.status(), "merge");
    report = "added " + std::to_string(counts->added[0]) + ", updated " + std::to_string(counts->updated[0]) +
             ", kept " + std::to_string(counts->kept[0]);
  }
  std::printf("%ld\n%s", PeakRssKib(), report.c_str());
  return 0;
}

// Checks the merged stores hold what the keep-faster rule gives: every key of A and B once, each
// with the faster of its two times. Every 97th key is checked in both stores; the counts in full.
void VerifyMerged(const std::string& dir, uint64_t n, const std::string& soc) {
  auto bank = OpenBankAt(dir + "/merged", OpenMode::kReadOnly, soc);
  {
    auto snapshot = bank->Read();
    Check(snapshot.status(), "read merged bank");
    const size_t stored = snapshot->Count(EntryKind::kOp);
    if (stored != n + n / 2)
      Die("merged bank holds " + std::to_string(stored) + " entries, expected " + std::to_string(n + n / 2));
  }
  sqlite3* db = OpenSqlite(dir + "/merged.sqlite");
  sqlite3_stmt* count = nullptr;
  CheckSql(sqlite3_prepare_v2(db, "SELECT count(*) FROM op", -1, &count, nullptr), db, "prepare");
  CheckSql(sqlite3_step(count), db, "count");
  if (static_cast<uint64_t>(sqlite3_column_int64(count, 0)) != n + n / 2) Die("merged SQLite table has the wrong row count");
  sqlite3_finalize(count);
  sqlite3_stmt* get = nullptr;
  CheckSql(sqlite3_prepare_v2(db, "SELECT after_us FROM op WHERE key = ?1", -1, &get, nullptr), db, "prepare");
  for (uint64_t i = 0; i < n + n / 2; i += 97) {
    double expected = 1e300;
    if (i < n) expected = std::min(expected, SyntheticEntry(i, 1).after.median_us);
    if (i >= n / 2) expected = std::min(expected, SyntheticEntry(i, 2).after.median_us);
    auto entry = bank->Find(EntryKind::kOp, SyntheticDescriptor(i));
    if (!entry.ok() || !*entry || (*entry)->after.median_us != expected) Die("merged bank: entry " + std::to_string(i) + " is wrong");
    sqlite3_bind_int64(get, 1, static_cast<sqlite3_int64>(KeyOfDescriptor(SyntheticDescriptor(i))));
    if (sqlite3_step(get) != SQLITE_ROW || sqlite3_column_double(get, 0) != expected)
      Die("merged SQLite table: row " + std::to_string(i) + " is wrong");
    sqlite3_reset(get);
  }
  sqlite3_finalize(get);
  sqlite3_close(db);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--merge-child") return MergeChild(argv[2], argv[3], HostSocVersion());
  uint64_t n = 1000000;
  int repeats = 3;
  std::string given_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--entries") n = PositiveArgument(a, next());
    else if (a == "--repeats") repeats = static_cast<int>(std::min<uint64_t>(PositiveArgument(a, next()), 100));
    else if (a == "--dir") given_dir = next();
    else Die("unknown argument " + a + " (use --entries N --repeats R --dir DIR)");
  }
  if (n < 2) Die("--entries " + std::to_string(n) + ": at least 2, so that B shares half of A");
  const std::string soc = HostSocVersion();
  const std::string dir = WorkDirectory(given_dir);
  std::printf("tilebank batch merge benchmark: %llu + %llu entries, half shared, soc %s, %d repeats\n",
              (unsigned long long)n, (unsigned long long)n, soc.c_str(), repeats);
  std::fflush(stdout);

  auto t = Clock::now();
  BuildStores(dir + "/bank_a", dir + "/a.sqlite", 0, n, 1, soc);
  BuildStores(dir + "/bank_b", dir + "/b.sqlite", n / 2, n, 2, soc);
  std::printf("built A and B in both stores in %.1f s\n", std::chrono::duration<double>(Clock::now() - t).count());
  std::fflush(stdout);

  std::vector<double> bank_s, sql_s;
  ChildRun bank_worst, sql_worst;  // the run with the highest peak memory of each
  std::string bank_counts;
  for (int r = 0; r < repeats; ++r) {
    fs::remove_all(dir + "/merged");
    fs::remove(dir + "/merged.sqlite");
    // Both copies the same way (LMDB's own copy writes around the page cache, which would leave
    // the bank's copy cold and SQLite's warm); A is closed, so its data file is the bank.
    fs::create_directory(dir + "/merged");
    fs::copy_file(dir + "/bank_a/data.mdb", dir + "/merged/data.mdb");
    fs::copy_file(dir + "/a.sqlite", dir + "/merged.sqlite");
    ChildRun bank = RunMergeChild("bank", dir);
    ChildRun sql = RunMergeChild("sqlite", dir);
    if (r == 0) VerifyMerged(dir, n, soc);
    bank_s.push_back(bank.seconds);
    sql_s.push_back(sql.seconds);
    bank_counts = bank.report;
    if (bank.peak_rss_mib >= bank_worst.peak_rss_mib) bank_worst = bank;
    if (sql.peak_rss_mib >= sql_worst.peak_rss_mib) sql_worst = sql;
    std::printf("  run %d: tilebank %.2f s, %ld MiB peak RSS; SQLite %.2f s, %ld MiB peak RSS\n", r + 1, bank.seconds,
                bank.peak_rss_mib, sql.seconds, sql.peak_rss_mib);
    std::fflush(stdout);
  }

  std::printf("\n%-44s %16s %16s\n", "", "tilebank (LMDB)", "SQLite (indexed)");
  std::printf("%-44s %16.2f %16.2f\n", "merge N + N, half shared, median (s)", Median(bank_s), Median(sql_s));
  std::printf("%-44s %16ld %16ld\n", "peak resident set, highest run (MiB)", bank_worst.peak_rss_mib, sql_worst.peak_rss_mib);
  std::printf("%-44s %16ld %16ld\n", "  anonymous memory, sampled peak (MiB)", bank_worst.peak_anon_mib, sql_worst.peak_anon_mib);
  std::printf("%-44s %16ld %16ld\n", "  file pages mapped, sampled peak (MiB)", bank_worst.peak_file_mib, sql_worst.peak_file_mib);
  std::printf("%-44s %16.1f %16.1f\n", "size on disk after the merge (MiB)", FileBytes(dir + "/merged/data.mdb") / 1048576.0,
              FileBytes(dir + "/merged.sqlite") / 1048576.0);
  std::printf("  merge result: %s; checked against the keep-faster rule in both stores\n", bank_counts.c_str());

  std::printf("\ngoals (issue 23)\n");
  const bool faster = Median(bank_s) < Median(sql_s);
  const bool small = bank_worst.peak_rss_mib < 1024;
  std::printf("  %-44s %-6s %.2f s against %.2f s\n", "merge faster than SQLite's", faster ? "met" : "MISSED", Median(bank_s), Median(sql_s));
  std::printf("  %-44s %-6s %ld MiB\n", "merge peak resident set < 1 GiB", small ? "met" : "MISSED", bank_worst.peak_rss_mib);
  if (given_dir.empty()) fs::remove_all(dir);
  return 0;
}
