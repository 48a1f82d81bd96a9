// Writers killed with SIGKILL at random moments: the bank must validate clean afterwards and
// keep every entry whose transaction committed. 20 kills during import, 20 during merge and 15
// during a loop of single-entry transactions (55 in all). Each kill first stops the writer and
// looks whether it holds the bank's write lock; each kind of writer must be caught inside its
// write transaction at least once, or the test proves nothing about that moment.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "engine/core/template_catalog.h"
#include "repo/jsonl.h"
#include "repo/validate.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;
namespace fs = std::filesystem;

namespace {

// Opens for reading; nullptr when there is no bank (never created, or its creation was killed).
std::unique_ptr<Bank> OpenIfThere(const std::string& dir) {
  OpenOptions options;
  auto bank = Bank::Open(dir, options);
  if (!bank.ok()) {
    REQUIRE_MESSAGE(bank.status().code() == StatusCode::kNotFound, bank.status().message());
    return nullptr;
  }
  return std::move(*bank);
}

std::string ExportOf(const std::string& dir) {
  auto bank = OpenIfThere(dir);
  if (!bank) return "";
  std::ostringstream out;
  REQUIRE(ExportBank(*bank->Read(), out).ok());
  return out.str();
}

void RequireClean(const std::string& dir) {
  auto bank = OpenIfThere(dir);
  if (!bank) return;
  auto problems = ValidateBank(*bank, kTestSoc, EngineTemplateVersions());
  REQUIRE(problems.ok());
  for (const Problem& p : *problems) FAIL_CHECK(p.where << ": " << p.what);
}

double Millis(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Runs the command to completion once, to learn how long it takes.
double TimeCli(const std::vector<std::string>& args) {
  auto start = std::chrono::steady_clock::now();
  REQUIRE(WaitChild(SpawnCli(args)) == 0);
  return Millis(std::chrono::steady_clock::now() - start);
}

// Whether the stopped process `pid` is inside a write transaction on the bank in `dir`: it holds
// LMDB's writer lock, so a write transaction begun here waits. The probe runs on a thread of its
// own, opening the bank included: a process stopped while it opens the bank holds the lock file
// exclusively, and mdb_env_open here waits for it (that is not a write transaction). Killing `pid`
// releases its locks (LMDB's robust mutex passes to the waiter), and the probe gives them up at once.
bool HoldsWriterLock(const std::string& dir, int pid) {
  std::error_code ec;
  // Only a data file whose two meta pages are written: opening an empty one here would create a bank.
  if (fs::file_size(dir + "/data.mdb", ec) < 2 * 4096 || ec) {
    kill(pid, SIGKILL);
    return false;
  }
  std::atomic<bool> opened{false};
  auto probe = std::async(std::launch::async, [&dir, &opened] {
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != 0) return;
    mdb_env_set_maxdbs(env, 16);
    if (mdb_env_open(env, dir.c_str(), MDB_NOTLS, 0664) == 0) {
      opened = true;
      MDB_txn* txn = nullptr;
      if (mdb_txn_begin(env, nullptr, 0, &txn) == 0) mdb_txn_abort(txn);
    }
    mdb_env_close(env);
  });
  bool waited = probe.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout;
  // Still opening: not a write transaction. Opened just now: give the transaction its own wait.
  if (waited && opened) waited = probe.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout;
  else waited = false;
  const bool in_transaction = waited && opened;
  kill(pid, SIGKILL);
  probe.wait();
  return in_transaction;
}

// Stops `pid` after `millis`, tells whether it was inside a write transaction on the bank in
// `bank_dir`, and kills it. A process that finished before is not inside one.
bool KillAfter(int pid, double millis, const std::string& bank_dir) {
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(millis * 1000)));
  kill(pid, SIGSTOP);
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  if (!WIFSTOPPED(status)) return false;  // it had exited, and is reaped
  const bool inside = HoldsWriterLock(bank_dir, pid);
  kill(pid, SIGKILL);
  WaitChild(pid);
  return inside;
}

// Kill times in [0.2, 1.6] x the command's full run, drawn at random from a window that closes in on
// the commit: a kill that found the bank as before and the writer outside its transaction moves the
// window's start to it, a kill after the commit moves its end. So most kills land around the write
// transaction, which is short next to reading the input, and some land inside it.
class KillTimes {
 public:
  KillTimes(double full_ms, uint32_t seed) : lo_(0.2 * full_ms), hi_(1.6 * full_ms), rng_(seed) {}
  double Next() { return last_ = std::uniform_real_distribution<double>(lo_, hi_)(rng_); }
  void Outcome(bool before_commit, bool inside) {
    if (before_commit && !inside) lo_ = last_;
    if (!before_commit) hi_ = last_;
    if (hi_ - lo_ < 2.0) {  // keep a little room around the boundary
      lo_ = std::max(0.0, lo_ - 2.0);
      hi_ += 2.0;
    }
  }

 private:
  double lo_, hi_, last_ = 0;
  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("SIGKILL during import: the bank is either untouched or fully imported, and validates") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 4000, 10.0);
  const std::string bank = (dir / "bank") + "/" + kTestSoc;
  const std::vector<std::string> args = {"bank", "import", dir / "in.jsonl", "--bank", dir / "bank", "--soc", kTestSoc};
  const double full = TimeCli(args);
  const std::string complete = ExportOf(bank);
  KillTimes times(full, 20261122);
  int untouched = 0, finished = 0, in_transaction = 0;
  for (int i = 0; i < 20 || (in_transaction == 0 && i < 60); ++i) {  // more kills while none landed inside (a loaded machine)
    fs::remove_all(dir / "bank");
    const bool inside = KillAfter(SpawnCli(args), times.Next(), bank);
    in_transaction += inside;
    RequireClean(bank);
    const std::string now = ExportOf(bank);
    const bool empty = now.empty() || now.find('\n') == now.size() - 1;  // no bank, or a header only
    CHECK_MESSAGE((empty || now == complete), "kill " << i << " left a partial import");
    (empty ? untouched : finished)++;
    times.Outcome(empty, inside);
  }
  MESSAGE("import kills: " << untouched << " before commit (" << in_transaction << " inside the write transaction), " << finished << " after");
  CHECK_MESSAGE(in_transaction > 0, "no kill landed inside the import's write transaction");
}

TEST_CASE("SIGKILL during merge: the destination is either as before or fully merged") {
  TempDir dir;
  WriteEntriesFile(dir / "dst.jsonl", 1, 2000, 10.0);
  WriteEntriesFile(dir / "src.jsonl", 1000, 3000, 8.0);
  for (const char* name : {"dst", "src"})
    REQUIRE(WaitChild(SpawnCli({"bank", "import", dir / (std::string(name) + ".jsonl"), "--bank", dir / name, "--soc", kTestSoc})) == 0);
  const std::string src = (dir / "src") + "/" + kTestSoc;
  const std::string pristine = (dir / "dst") + "/" + kTestSoc;
  const std::string target_root = dir / "target";
  const std::string target = target_root + "/" + kTestSoc;
  auto reset = [&] {
    fs::remove_all(target_root);
    fs::create_directories(target);
    fs::copy_file(pristine + "/data.mdb", target + "/data.mdb");
  };
  const std::vector<std::string> args = {"bank", "merge", src, "--into", target};
  reset();
  const std::string before = ExportOf(target);
  const double full = TimeCli(args);
  const std::string after = ExportOf(target);
  REQUIRE(before != after);
  KillTimes times(full, 7);
  int as_before = 0, merged = 0, in_transaction = 0;
  for (int i = 0; i < 20 || (in_transaction == 0 && i < 60); ++i) {  // more kills while none landed inside (a loaded machine)
    reset();
    const bool inside = KillAfter(SpawnCli(args), times.Next(), target);
    in_transaction += inside;
    RequireClean(target);
    const std::string now = ExportOf(target);
    CHECK_MESSAGE((now == before || now == after), "kill " << i << " left a partial merge");
    (now == before ? as_before : merged)++;
    times.Outcome(now == before, inside);
  }
  MESSAGE("merge kills: " << as_before << " before commit (" << in_transaction << " inside the write transaction), " << merged << " after");
  CHECK_MESSAGE(in_transaction > 0, "no kill landed inside the merge's write transaction");
}

TEST_CASE("SIGKILL during a loop of single-entry writes: every committed entry survives") {
  TempDir dir;
  const std::string bank_dir = dir / "bank";
  { CreateBank(bank_dir); }
  std::mt19937 rng(99);
  int next = 1, in_transaction = 0;
  for (int i = 0; i < 15 || (in_transaction == 0 && i < 45); ++i) {  // more kills while none landed inside (a loaded machine)
    const std::string log = dir / ("committed-" + std::to_string(i));
    const int first = next;
    pid_t pid = fork();
    if (pid == 0) {
      // The child opens its own environment (LMDB handles must not cross fork) and logs each
      // entry's number only after its transaction committed.
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      auto bank = OpenExisting(bank_dir);
      for (int m = first;; ++m) {
        Status s = bank->Write([&](WriteTxn& txn) { return txn.Put(MatMulEntry(m, 8, 8, 1.0 + m % 5), PutPolicy::kKeepFaster).status(); });
        if (!s.ok()) _exit(3);
        std::string line = std::to_string(m) + "\n";
        if (write(fd, line.data(), line.size()) < 0) _exit(4);
      }
    }
    // The kill comes 5-60 ms after the child's first commit (on a loaded machine the child may take
    // longer than that to start at all).
    for (int waited = 0; waited < 10000 && (!fs::exists(log) || fs::file_size(log) == 0); ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    in_transaction += KillAfter(pid, std::uniform_real_distribution<double>(5, 60)(rng), bank_dir);
    RequireClean(bank_dir);
    auto bank = OpenExisting(bank_dir, OpenMode::kReadOnly);
    std::istringstream committed(ReadFile(log));
    int count = 0;
    for (int m; committed >> m; ++count) {
      auto found = bank->Find(EntryKind::kOp, MatMulEntry(m, 8, 8, 1).descriptor);
      REQUIRE(found.ok());
      CHECK_MESSAGE(found->has_value(), "entry " << m << " committed before kill " << i << " is gone");
      next = std::max(next, m + 1);
    }
    next += 1000;  // the entry in flight may or may not have committed; start clear of it
    CHECK(count > 0);
  }
  MESSAGE("single-entry kills inside a write transaction: " << in_transaction << " of 15");
  CHECK_MESSAGE(in_transaction > 0, "no kill landed inside a write transaction");
}
