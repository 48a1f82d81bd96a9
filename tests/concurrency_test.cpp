// Several processes writing one bank at once: LMDB's writer lock serializes them and
// keep-faster decides inside each transaction, so no update is lost and the faster entry wins.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <nlohmann/json.hpp>

#include "repo/entry_json.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

TEST_CASE("two imports at once lose no update and keep the faster entry for every key") {
  TempDir dir;
  // Shared keys 1..3000 with times drawn independently per file; each file also has keys of its own.
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> time(1.0, 100.0);
  std::vector<double> best(3000 + 1, 1e9);
  for (const char* name : {"a", "b"}) {
    std::ofstream out(dir / (std::string(name) + ".jsonl"));
    out << nlohmann::json{{"tilebank_export", 1}, {"soc_version", kTestSoc}}.dump() << "\n";
    for (int m = 1; m <= 3000; ++m) {
      double t = time(rng);
      best[m] = std::min(best[m], t);
      out << EntryToJson(MatMulEntry(m, 32, 32, t, 1000)).dump() << "\n";
    }
    const int own = name[0] == 'a' ? 10000 : 20000;
    for (int m = own; m < own + 500; ++m) out << EntryToJson(MatMulEntry(m, 32, 32, 5.0, 1000)).dump() << "\n";
  }
  const std::string root = dir / "bank";
  int pa = SpawnCli({"bank", "import", dir / "a.jsonl", "--bank", root, "--soc", kTestSoc});
  int pb = SpawnCli({"bank", "import", dir / "b.jsonl", "--bank", root, "--soc", kTestSoc});
  REQUIRE(WaitChild(pa) == 0);
  REQUIRE(WaitChild(pb) == 0);

  auto bank = OpenExisting(root + "/" + kTestSoc, OpenMode::kReadOnly);
  CHECK(bank->Read()->Count(EntryKind::kOp) == 4000);
  for (int m = 1; m <= 3000; ++m) {
    auto e = bank->Find(EntryKind::kOp, MatMulEntry(m, 32, 32, 1).descriptor);
    REQUIRE(e->has_value());
    CHECK((*e)->after.median_us == best[m]);
  }
}

TEST_CASE("single-entry writers racing on the same keys end with the fastest of each") {
  TempDir dir;
  const std::string bank_dir = dir / "bank";
  { CreateBank(bank_dir); }
  constexpr int kWriters = 3, kKeys = 300;
  auto time_of = [](int writer, int m) { return 1.0 + ((m * 7 + writer * 13) % 17); };
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    if (pid == 0) {
      auto bank = OpenExisting(bank_dir);
      for (int m = 1; m <= kKeys; ++m) {
        Status s = bank->Write([&](WriteTxn& txn) { return txn.Put(MatMulEntry(m, 4, 4, time_of(w, m)), PutPolicy::kKeepFaster).status(); });
        if (!s.ok()) _exit(3);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) REQUIRE(WaitChild(pid) == 0);
  auto bank = OpenExisting(bank_dir, OpenMode::kReadOnly);
  for (int m = 1; m <= kKeys; ++m) {
    double best = 1e9;
    for (int w = 0; w < kWriters; ++w) best = std::min(best, time_of(w, m));
    auto e = bank->Find(EntryKind::kOp, MatMulEntry(m, 4, 4, 1).descriptor);
    REQUIRE(e->has_value());
    CHECK((*e)->after.median_us == best);
  }
}
