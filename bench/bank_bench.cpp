// The bank against its anchors, side by side in one run, on the same N operator entries:
//   tilebank  - the LMDB bank (repo/)
//   SQLite    - an indexed table (key INTEGER PRIMARY KEY, descriptor, value blob), MIOpen
//               perf-db style, prepared statements, mmap on: SQLite's best case
//   JSONL     - a JSON Lines file loaded into a hash map, TVM log style
// Measures bulk import, size on disk, open-to-first-answer, point lookups (hits and misses,
// single thread, p50/p99) and merging two N-entry banks. Every lookup returns a decoded,
// verified entry whose descriptor was compared, in all three.
//
//   build/bank_bench [--entries N] [--lookups L] [--dir DIR] [--repeats R]
// DIR must be new or empty, and the data stays there; without it the run works in a directory of
// its own under /tmp and removes it at the end.
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/bench_data.h"
#include "bench/bench_stores.h"
#include "engine/core/soc_version.h"
#include "repo/entry_codec.h"
#include "repo/entry_json.h"
#include "repo/jsonl.h"
#include "repo/merge.h"

using namespace tilebank;
using namespace tilebank::bench;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct LookupStats {
  double per_second = 0, p50_us = 0, p99_us = 0;
};

// Runs `lookup` over the probes once untimed (warm-up: page faults, caches), then `repeats`
// times, each lookup timed on its own. The probe's
// descriptor is built just before its lookup (outside the timer), as a runtime has the
// descriptor of the operator it is about to run in hand: what is measured is the lookup, not a
// cache miss on a string in a million-element probe list. Throughput is 1 / mean latency.
template <typename Fn>
LookupStats MeasureLookups(const std::vector<uint64_t>& probes, int repeats, bool expect_hits, Fn lookup) {
  std::vector<double> latencies;
  latencies.reserve(probes.size() * repeats);
  for (uint64_t i : probes) lookup(bench::SyntheticDescriptor(i));  // warm-up pass, untimed
  for (int r = 0; r < repeats; ++r) {
    size_t found = 0;
    for (uint64_t i : probes) {
      const std::string descriptor = bench::SyntheticDescriptor(i);
      auto t0 = Clock::now();
      found += lookup(descriptor);
      latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    if (found != (expect_hits ? probes.size() : 0)) Die("lookups returned wrong answers");
  }
  double mean = 0;
  for (double l : latencies) mean += l;
  mean /= latencies.size();
  std::sort(latencies.begin(), latencies.end());
  return {1e6 / mean, latencies[latencies.size() / 2], latencies[latencies.size() * 99 / 100]};
}

long PeakRssMiB() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// --- SQLite anchor -------------------------------------------------------------------------

class SqliteLookup {
 public:
  explicit SqliteLookup(sqlite3* db) {
    CheckSql(sqlite3_prepare_v2(db, "SELECT descriptor, value FROM op WHERE key = ?1", -1, &stmt_, nullptr), db, "prepare");
  }
  ~SqliteLookup() { sqlite3_finalize(stmt_); }
  bool operator()(const std::string& descriptor) {
    sqlite3_bind_int64(stmt_, 1, static_cast<sqlite3_int64>(KeyOfDescriptor(descriptor)));
    bool hit = false;
    if (sqlite3_step(stmt_) == SQLITE_ROW) {
      std::string_view stored(static_cast<const char*>(sqlite3_column_blob(stmt_, 1)), sqlite3_column_bytes(stmt_, 1));
      auto entry = DecodeEntry(stored);
      hit = entry.ok() && entry->descriptor == descriptor;
    }
    sqlite3_reset(stmt_);
    return hit;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// --- JSONL + hash map anchor ---------------------------------------------------------------

std::unordered_map<Key, Entry> LoadJsonl(const std::string& path) {
  std::ifstream in(path);
  auto parsed = ParseJsonl(in, path);
  if (!parsed.ok()) Die(parsed.status().message());
  std::unordered_map<Key, Entry> map;
  map.reserve(parsed->entries.size());
  for (Entry& e : parsed->entries) {
    Key k = e.key();
    map.insert_or_assign(k, std::move(e));
  }
  return map;
}

void WriteJsonl(const std::string& path, const std::vector<Entry>& entries, const std::string& soc) {
  std::ofstream out(path, std::ios::trunc);
  out << DumpJson(nlohmann::json{{"tilebank_export", kExportFormat}, {"soc_version", soc}}) << '\n';
  for (const Entry& e : entries) out << DumpJson(EntryToJson(e)) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = 1000000, lookups = 1000000;
  int repeats = 3;
  std::string given_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--entries") n = PositiveArgument(a, next());
    else if (a == "--lookups") lookups = PositiveArgument(a, next());
    else if (a == "--dir") given_dir = next();
    else if (a == "--repeats") repeats = static_cast<int>(std::min<uint64_t>(PositiveArgument(a, next()), 1000));
    else Die("unknown argument " + a + " (use --entries N --lookups L --dir DIR --repeats R)");
  }
  const std::string soc = HostSocVersion();
  const std::string dir = WorkDirectory(given_dir);
  std::printf("tilebank bank benchmark: %llu operator entries, %llu lookups x %d passes, soc %s, 1 thread\n",
              (unsigned long long)n, (unsigned long long)lookups, repeats, soc.c_str());

  // The data: bank A (seed 1) and bank B (seed 2), B sharing half of A's keys.
  std::vector<Entry> a_entries, b_entries;
  a_entries.reserve(n);
  b_entries.reserve(n);
  for (uint64_t i = 0; i < n; ++i) a_entries.push_back(bench::SyntheticEntry(i, 1));
  for (uint64_t i = n / 2; i < n + n / 2; ++i) b_entries.push_back(bench::SyntheticEntry(i, 2));
  const std::string a_jsonl = dir + "/a.jsonl", b_jsonl = dir + "/b.jsonl";
  WriteJsonl(a_jsonl, a_entries, soc);
  WriteJsonl(b_jsonl, b_entries, soc);
  b_entries.clear();
  b_entries.shrink_to_fit();

  // Bulk import from the same JSON Lines file.
  ::sync();
  auto t = Clock::now();
  std::ifstream in(a_jsonl);
  auto parsed = ParseJsonl(in, a_jsonl);
  if (!parsed.ok()) Die(parsed.status().message());
  const double parse_s = Seconds(t);
  auto bank = OpenBankAt(dir + "/bank_a", OpenMode::kCreateIfMissing, soc);
  t = Clock::now();
  auto counts = ImportEntries(*bank, parsed->entries, PutPolicy::kKeepFaster);
  Check(counts.status(), "import");
  const double bank_write_s = Seconds(t);

  sqlite3* sql = OpenSqlite(dir + "/a.sqlite");
  ::sync();
  t = Clock::now();
  SqliteImport(sql, parsed->entries);
  const double sql_write_s = Seconds(t);
  sqlite3_close(sql);
  parsed->entries.clear();
  parsed->entries.shrink_to_fit();

  t = Clock::now();
  auto map = LoadJsonl(a_jsonl);
  const double jsonl_load_s = Seconds(t);

  // Probes: random existing descriptors (hits) and descriptors of entries never stored (misses).
  std::mt19937_64 rng(12345);
  std::vector<uint64_t> hits, misses;
  for (uint64_t i = 0; i < lookups; ++i) hits.push_back(rng() % n);
  for (uint64_t i = 0; i < lookups; ++i) misses.push_back(4 * n + rng() % (4 * n));
  // A model's working set: 1,000 distinct operators, looked up again and again in random order.
  std::vector<uint64_t> model_ops, hot;
  for (int i = 0; i < 1000; ++i) model_ops.push_back(rng() % n);
  for (uint64_t i = 0; i < lookups; ++i) hot.push_back(model_ops[rng() % model_ops.size()]);
  const std::string first_probe = bench::SyntheticDescriptor(hits[0]);
  a_entries.clear();
  a_entries.shrink_to_fit();

  // Open to first answer, 5 times: the first may wait for the disk (the page cache may have
  // dropped the files meanwhile), the median is the usual case.
  auto median_of_runs = [](auto once, double* first) {
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) {
      auto start = Clock::now();
      once();
      ms.push_back(Seconds(start) * 1e3);
    }
    *first = ms[0];
    std::sort(ms.begin(), ms.end());
    return ms[2];
  };
  bank.reset();
  double bank_open_first = 0, sql_open_first = 0;
  const double bank_open_ms = median_of_runs(
      [&] {
        auto fresh = OpenBankAt(dir + "/bank_a", OpenMode::kReadOnly, soc);
        auto e = fresh->Find(EntryKind::kOp, first_probe);
        if (!e.ok() || !*e) Die("first answer missing");
      },
      &bank_open_first);
  const double sql_open_ms = median_of_runs(
      [&] {
        sqlite3* db = OpenSqlite(dir + "/a.sqlite");
        {
          SqliteLookup lookup(db);
          if (!lookup(first_probe)) Die("sqlite first answer missing");
        }
        sqlite3_close(db);
      },
      &sql_open_first);
  t = Clock::now();
  {
    auto fresh_map = LoadJsonl(a_jsonl);
    auto it = fresh_map.find(KeyOfDescriptor(first_probe));
    if (it == fresh_map.end() || it->second.descriptor != first_probe) Die("jsonl first answer missing");
  }
  const double jsonl_open_ms = Seconds(t) * 1e3;

  // Point lookups.
  bank = OpenBankAt(dir + "/bank_a", OpenMode::kReadOnly, soc);
  // The runtime's path: a checked view of the stored entry (Bank::FindView). The row below it
  // also copies every field out into an Entry (Bank::Find), as the command line does.
  EntryView view;
  auto bank_lookup = [&](const std::string& d) {
    auto found = bank->FindView(EntryKind::kOp, d, &view);
    return found.ok() && *found && view.policy()["tile_m"].AsInt64() > 0;
  };
  auto bank_lookup_copy = [&](const std::string& d) {
    auto e = bank->Find(EntryKind::kOp, d);
    return e.ok() && e->has_value();
  };
  sqlite3* db = OpenSqlite(dir + "/a.sqlite");
  SqliteLookup sql_lookup(db);
  auto map_lookup = [&](const std::string& d) {
    auto it = map.find(KeyOfDescriptor(d));
    return it != map.end() && it->second.descriptor == d;
  };
  LookupStats bank_hit = MeasureLookups(hits, repeats, true, bank_lookup);
  LookupStats sql_hit = MeasureLookups(hits, repeats, true, [&](const std::string& d) { return sql_lookup(d); });
  LookupStats map_hit = MeasureLookups(hits, repeats, true, map_lookup);
  LookupStats bank_hot = MeasureLookups(hot, repeats, true, bank_lookup);
  LookupStats sql_hot = MeasureLookups(hot, repeats, true, [&](const std::string& d) { return sql_lookup(d); });
  LookupStats map_hot = MeasureLookups(hot, repeats, true, map_lookup);
  LookupStats bank_copy = MeasureLookups(hits, repeats, true, bank_lookup_copy);
  LookupStats bank_miss = MeasureLookups(misses, repeats, false, bank_lookup);
  LookupStats sql_miss = MeasureLookups(misses, repeats, false, [&](const std::string& d) { return sql_lookup(d); });
  LookupStats map_miss = MeasureLookups(misses, repeats, false, map_lookup);
  map.clear();
  bank.reset();

  // Merge: B into a copy of A (both N entries, half the keys shared).
  {
    std::ifstream bin(b_jsonl);
    auto b = ParseJsonl(bin, b_jsonl);
    if (!b.ok()) Die(b.status().message());
    auto bank_b = OpenBankAt(dir + "/bank_b", OpenMode::kCreateIfMissing, soc);
    Check(ImportEntries(*bank_b, b->entries, PutPolicy::kKeepFaster).status(), "import b");
    sqlite3* sb = OpenSqlite(dir + "/b.sqlite");
    SqliteImport(sb, b->entries);
    sqlite3_close(sb);
  }
  {
    auto a_bank = OpenBankAt(dir + "/bank_a", OpenMode::kReadOnly, soc);
    Check(a_bank->CopyTo(dir + "/merged", false), "copy");
  }
  fs::copy_file(dir + "/a.sqlite", dir + "/merged.sqlite");
  auto merged = OpenBankAt(dir + "/merged", OpenMode::kReadWrite, soc);
  auto source = OpenBankAt(dir + "/bank_b", OpenMode::kReadOnly, soc);
  ::sync();  // let the gigabytes written so far reach the disk: the merge is timed, not their writeback
  t = Clock::now();
  auto merge_counts = MergeInto(*merged, {source.get()}, false);
  Check(merge_counts.status(), "merge");
  const double bank_merge_s = Seconds(t);
  sqlite3* ms = OpenSqlite(dir + "/merged.sqlite");
  ::sync();
  t = Clock::now();
  SqliteMerge(ms, dir + "/b.sqlite");
  const double sql_merge_s = Seconds(t);
  sqlite3_close(ms);
  sqlite3_close(db);

  const double mib = 1024.0 * 1024.0;
  std::printf("\n%-40s %16s %16s %16s\n", "", "tilebank (LMDB)", "SQLite (indexed)", "JSONL + hash map");
  std::printf("%-40s %16.2f %16.2f %16.2f\n", "bulk import from JSONL (s)", parse_s + bank_write_s, parse_s + sql_write_s, jsonl_load_s);
  std::printf("%-40s %16.2f %16.2f %16s\n", "  of which writing the store (s)", bank_write_s, sql_write_s, "-");
  std::printf("%-40s %16.1f %16.1f %16.1f\n", "size on disk (MiB)", FileBytes(dir + "/bank_a/data.mdb") / mib,
              FileBytes(dir + "/a.sqlite") / mib, FileBytes(a_jsonl) / mib);
  std::printf("%-40s %16.3f %16.3f %16.1f\n", "open to first answer, median of 5 (ms)", bank_open_ms, sql_open_ms, jsonl_open_ms);
  std::printf("%-40s %16.3f %16.3f %16s\n", "  the first of the 5 (ms)", bank_open_first, sql_open_first, "-");
  std::printf("%-40s %16.3f %16.3f %16.3f\n", "point lookups, hits, uniform (M/s)", bank_hit.per_second / 1e6, sql_hit.per_second / 1e6, map_hit.per_second / 1e6);
  std::printf("%-40s %7.2f / %6.2f %7.2f / %6.2f %7.2f / %6.2f\n", "  latency p50 / p99 (us)", bank_hit.p50_us, bank_hit.p99_us,
              sql_hit.p50_us, sql_hit.p99_us, map_hit.p50_us, map_hit.p99_us);
  std::printf("%-40s %16.3f %16s %16s\n", "  hits copied out to an Entry (M/s)", bank_copy.per_second / 1e6, "-", "-");
  std::printf("%-40s %7.2f / %6.2f %16s %16s\n", "  latency p50 / p99 (us)", bank_copy.p50_us, bank_copy.p99_us, "-", "-");
  std::printf("%-40s %16.3f %16.3f %16.3f\n", "point lookups, misses (M/s)", bank_miss.per_second / 1e6, sql_miss.per_second / 1e6, map_miss.per_second / 1e6);
  std::printf("%-40s %7.2f / %6.2f %7.2f / %6.2f %7.2f / %6.2f\n", "  latency p50 / p99 (us)", bank_miss.p50_us, bank_miss.p99_us,
              sql_miss.p50_us, sql_miss.p99_us, map_miss.p50_us, map_miss.p99_us);
  std::printf("%-40s %16.3f %16.3f %16.3f\n", "point lookups, hits, 1,000-op set (M/s)", bank_hot.per_second / 1e6, sql_hot.per_second / 1e6, map_hot.per_second / 1e6);
  std::printf("%-40s %7.2f / %6.2f %7.2f / %6.2f %7.2f / %6.2f\n", "  latency p50 / p99 (us)", bank_hot.p50_us, bank_hot.p99_us,
              sql_hot.p50_us, sql_hot.p99_us, map_hot.p50_us, map_hot.p99_us);
  std::printf("%-40s %16.2f %16.2f %16s\n", "merge N + N, half shared (s)", bank_merge_s, sql_merge_s, "-");
  const size_t added = merge_counts->added[0], updated = merge_counts->updated[0], kept = merge_counts->kept[0];
  std::printf("  merge result: added %zu, updated %zu, kept %zu; peak RSS of the whole benchmark %ld MiB (the merge alone: batch_merge_bench)\n", added, updated, kept, PeakRssMiB());

  std::printf("\ngoals (issue 2)\n");
  auto goal = [](const char* what, bool met, const std::string& detail) {
    std::printf("  %-44s %-6s %s\n", what, met ? "met" : "MISSED", detail.c_str());
  };
  char buf[128];
  std::snprintf(buf, sizeof buf, "hits %.1fx, misses %.1fx", bank_hit.per_second / sql_hit.per_second,
                bank_miss.per_second / sql_miss.per_second);
  goal("point lookups >= 5x SQLite (uniform)", bank_hit.per_second >= 5 * sql_hit.per_second && bank_miss.per_second >= 5 * sql_miss.per_second, buf);
  std::snprintf(buf, sizeof buf, "p50 hit %.2f us, miss %.2f us", bank_hit.p50_us, bank_miss.p50_us);
  goal("p50 lookup < 2 us (uniform)", bank_hit.p50_us < 2 && bank_miss.p50_us < 2, buf);
  std::snprintf(buf, sizeof buf, "%.3f ms", bank_open_ms);
  goal("open to first answer < 10 ms", bank_open_ms < 10, buf);
  // The goal is set at 1M + 1M entries: at another --entries the line says what was merged, and
  // that the goal does not apply.
  char merge_label[64];
  std::snprintf(merge_label, sizeof merge_label, "merge %llu + %llu < 20 s", (unsigned long long)n, (unsigned long long)n);
  std::snprintf(buf, sizeof buf, "%.2f s%s", bank_merge_s, n == 1000000 ? "" : " (the goal is set at 1000000 + 1000000: not judged)");
  if (n == 1000000) goal(merge_label, bank_merge_s < 20, buf);
  else std::printf("  %-44s %-6s %s\n", merge_label, "-", buf);
  std::snprintf(buf, sizeof buf, "%.1fx, p50 %.2f us", bank_hot.per_second / sql_hot.per_second, bank_hot.p50_us);
  goal("1,000-op set: >= 5x SQLite, p50 < 2 us", bank_hot.per_second >= 5 * sql_hot.per_second && bank_hot.p50_us < 2, buf);
  if (given_dir.empty()) {
    std::error_code ec;  // the directory this run made for itself
    fs::remove_all(dir, ec);
  }
  return 0;
}
