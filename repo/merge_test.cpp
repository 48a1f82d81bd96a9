#include "repo/merge.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "repo/jsonl.h"
#include "repo/maintenance.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

TEST_CASE("merge: added, updated (faster wins), kept (slower or tie), loser in history") {
  TempDir dir;
  auto dst = CreateBank(dir / "dst");
  auto src = CreateBank(dir / "src");
  REQUIRE(ImportEntries(*dst, {MatMulEntry(8, 8, 8, 10.0), MatMulEntry(16, 8, 8, 10.0), MatMulEntry(32, 8, 8, 10.0)},
                        PutPolicy::kKeepFaster).ok());
  REQUIRE(ImportEntries(*src, {MatMulEntry(8, 8, 8, 7.0, 0, "src"), MatMulEntry(16, 8, 8, 12.0, 0, "src"),
                               MatMulEntry(32, 8, 8, 10.0, 0, "src"), MatMulEntry(64, 8, 8, 1.0, 0, "src"),
                               GraphEntry(32, 5.0)},
                        PutPolicy::kKeepFaster).ok());
  auto counts = MergeInto(*dst, {src.get()}, false);
  REQUIRE(counts.ok());
  CHECK(counts->added[0] == 1);
  CHECK(counts->updated[0] == 1);
  CHECK(counts->kept[0] == 2);
  CHECK(counts->added[1] == 1);

  auto winner = dst->Find(EntryKind::kOp, MatMulEntry(8, 8, 8, 1).descriptor);
  CHECK((*winner)->after.median_us == 7.0);
  CHECK((*winner)->origin_host == "src");
  auto tie = dst->Find(EntryKind::kOp, MatMulEntry(32, 8, 8, 1).descriptor);
  CHECK((*tie)->origin_host == "test-host");  // ties keep the destination
  auto log = EntryLog(*dst, EntryKind::kOp, MatMulEntry(8, 8, 8, 1).key());
  REQUIRE(log->size() == 2);
  CHECK((*log)[0].after.median_us == 10.0);
  CHECK((*log)[0].superseded_generation == (*log)[1].generation);
}

namespace {

// GradEntry with its plan's verification knob: "measured" in a running job, or "model" (predicted).
Entry VerifiedGradEntry(double after_us, const std::string& verified) {
  Entry e = GradEntry(4, after_us);
  e.policy.push_back({"verified", verified});
  std::sort(e.policy.begin(), e.policy.end(), [](const Knob& a, const Knob& b) { return a.name < b.name; });
  return e;
}

}  // namespace

TEST_CASE("merge: a measured gradient plan outranks a predicted one, whatever their times, by either method") {
  for (MergeMethod method : {MergeMethod::kPutEach, MergeMethod::kRewrite}) {
    TempDir dir;
    auto measured = CreateBank(dir / "measured");
    auto predicted = CreateBank(dir / "predicted");
    auto faster_measured = CreateBank(dir / "faster_measured");
    // A measured iteration is longer than a predicted AllReduce finish: the times are not comparable.
    REQUIRE(ImportEntries(*measured, {VerifiedGradEntry(90000.0, "measured")}, PutPolicy::kKeepFaster).ok());
    REQUIRE(ImportEntries(*predicted, {VerifiedGradEntry(40000.0, "model")}, PutPolicy::kKeepFaster).ok());
    REQUIRE(ImportEntries(*faster_measured, {VerifiedGradEntry(80000.0, "measured")}, PutPolicy::kKeepFaster).ok());
    const Entry probe = VerifiedGradEntry(1, "model");

    auto kept = MergeInto(*measured, {predicted.get()}, false, method);  // a prediction does not replace a measurement
    REQUIRE(kept.ok());
    CHECK(kept->kept[2] == 1);
    CHECK((*measured->Find(EntryKind::kGrad, probe.descriptor))->after.median_us == 90000.0);
    auto replaced = MergeInto(*predicted, {measured.get()}, false, method);  // a measurement replaces a prediction
    REQUIRE(replaced.ok());
    CHECK(replaced->updated[2] == 1);
    CHECK((*predicted->Find(EntryKind::kGrad, probe.descriptor))->after.median_us == 90000.0);
    auto faster = MergeInto(*measured, {faster_measured.get()}, false, method);  // between measurements, the faster
    REQUIRE(faster.ok());
    CHECK(faster->updated[2] == 1);
    CHECK((*measured->Find(EntryKind::kGrad, probe.descriptor))->after.median_us == 80000.0);
  }
}

TEST_CASE("merge dry run counts and writes nothing") {
  TempDir dir;
  auto dst = CreateBank(dir / "dst");
  auto src = CreateBank(dir / "src");
  REQUIRE(ImportEntries(*src, {MatMulEntry(8, 8, 8, 7.0)}, PutPolicy::kKeepFaster).ok());
  auto counts = MergeInto(*dst, {src.get()}, true);
  REQUIRE(counts.ok());
  CHECK(counts->added[0] == 1);
  CHECK(dst->Read()->Count(EntryKind::kOp) == 0);
  CHECK(dst->Read()->meta().generation == 0);
}

namespace {

// Every record of a bank, byte for byte: entries of each kind, history and the shape index.
std::string EveryRecord(const Bank& bank) {
  auto snapshot = bank.Read();
  REQUIRE(snapshot.ok());
  std::string all = "generation " + std::to_string(snapshot->meta().generation) + "\n";
  for (EntryKind kind : kAllKinds)
    REQUIRE(snapshot->ForEach(kind, [&](Key key, std::string_view stored) {
      all += FormatKey(kind, key) + " " + std::string(stored) + "\n";
      return Status::Ok();
    }).ok());
  REQUIRE(snapshot->ForEachHistory([&](EntryKind kind, Key key, uint32_t revision, std::string_view stored) {
    all += "history " + FormatKey(kind, key) + " " + std::to_string(revision) + " " + std::string(stored) + "\n";
    return Status::Ok();
  }).ok());
  REQUIRE(snapshot->ForEachShapeIndexRow([&](uint64_t shape_class, Key key) {
    all += "class " + std::to_string(shape_class) + " " + FormatKey(EntryKind::kOp, key) + "\n";
    return Status::Ok();
  }).ok());
  return all;
}

}  // namespace

TEST_CASE("merge: rewriting the tables in key order gives the bank that one Put per entry gives") {
  TempDir dir;
  {
    // The destination has history (replaced entries) and a removed key that comes back.
    auto dst = CreateBank(dir / "dst");
    std::vector<Entry> first, second;
    for (int m = 1; m <= 120; ++m) first.push_back(MatMulEntry(m, 8, 8, 10.0 + m % 7));
    for (int m = 1; m <= 120; m += 3) second.push_back(MatMulEntry(m, 8, 8, 5.0 + m % 5, 0, "faster"));
    first.push_back(GraphEntry(4, 9.0));
    REQUIRE(ImportEntries(*dst, first, PutPolicy::kKeepFaster).ok());
    REQUIRE(ImportEntries(*dst, second, PutPolicy::kKeepFaster).ok());
    REQUIRE(dst->Write([](WriteTxn& txn) { return txn.Remove(EntryKind::kOp, MatMulEntry(7, 8, 8, 1).key()).status(); }).ok());
  }
  {
    // Two sources overlapping the destination and each other: faster, slower, ties, identical
    // entries, keys only in one source, and a key both sources improve in turn.
    auto a = CreateBank(dir / "a");
    auto b = CreateBank(dir / "b");
    std::vector<Entry> in_a, in_b;
    for (int m = 60; m <= 200; ++m) in_a.push_back(MatMulEntry(m, 8, 8, 4.0 + m % 11, 0, "a"));
    in_a.push_back(MatMulEntry(7, 8, 8, 3.0, 0, "a"));
    in_a.push_back(MatMulEntry(90, 8, 8, 10.0 + 90 % 7));  // the destination's own entry, unchanged
    for (int m = 150; m <= 260; ++m) in_b.push_back(MatMulEntry(m, 8, 8, 2.0 + m % 13, 0, "b"));
    in_b.push_back(MatMulEntry(300, 8, 8, 1.0, 0, "b"));
    in_b.push_back(GraphEntry(4, 8.0));
    in_b.push_back(GraphEntry(6, 8.0));
    in_b.push_back(GradEntry(8, 3.0));
    REQUIRE(ImportEntries(*a, in_a, PutPolicy::kOverwrite).ok());
    REQUIRE(ImportEntries(*b, in_b, PutPolicy::kKeepFaster).ok());
  }
  {
    auto dst = OpenExisting(dir / "dst", OpenMode::kReadOnly);
    REQUIRE(dst->CopyTo(dir / "by_puts", false).ok());
    REQUIRE(dst->CopyTo(dir / "rewritten", false).ok());
  }
  auto a = OpenExisting(dir / "a", OpenMode::kReadOnly);
  auto b = OpenExisting(dir / "b", OpenMode::kReadOnly);
  auto by_puts = OpenExisting(dir / "by_puts");
  auto rewritten = OpenExisting(dir / "rewritten");
  auto put_counts = MergeInto(*by_puts, {a.get(), b.get()}, false, MergeMethod::kPutEach);
  auto rewrite_counts = MergeInto(*rewritten, {a.get(), b.get()}, false, MergeMethod::kRewrite);
  REQUIRE(put_counts.ok());
  REQUIRE(rewrite_counts.ok());
  for (int kind = 0; kind < 3; ++kind) {
    CHECK(put_counts->added[kind] == rewrite_counts->added[kind]);
    CHECK(put_counts->updated[kind] == rewrite_counts->updated[kind]);
    CHECK(put_counts->kept[kind] == rewrite_counts->kept[kind]);
  }
  CHECK(put_counts->added[0] > 0);
  CHECK(put_counts->updated[0] > 0);
  CHECK(put_counts->kept[0] > 0);
  CHECK(EveryRecord(*by_puts) == EveryRecord(*rewritten));

  // A merge that changes nothing writes nothing, by either method.
  const std::string before = EveryRecord(*rewritten);
  for (MergeMethod method : {MergeMethod::kPutEach, MergeMethod::kRewrite}) {
    auto again = MergeInto(*rewritten, {a.get(), b.get()}, false, method);
    REQUIRE(again.ok());
    CHECK(again->added[0] + again->updated[0] == 0);
    CHECK(EveryRecord(*rewritten) == before);
  }
}

TEST_CASE("merge: a rewrite that fills the map grows it, runs again and gives what Puts give") {
  TempDir dir;
  {
    auto source = CreateBank(dir / "src");
    std::vector<Entry> entries;
    for (int m = 1; m <= 3000; ++m) entries.push_back(MatMulEntry(m, 8, 8, 1.0 + m % 17));
    REQUIRE(ImportEntries(*source, entries, PutPolicy::kKeepFaster).ok());
  }
  auto source = OpenExisting(dir / "src", OpenMode::kReadOnly);
  // Destinations whose map (1 MiB) is smaller than what the merge writes.
  auto by_puts = CreateBank(dir / "by_puts", kTestSoc, size_t{1} << 20);
  auto rewritten = CreateBank(dir / "rewritten", kTestSoc, size_t{1} << 20);
  REQUIRE(ImportEntries(*by_puts, {MatMulEntry(5, 8, 8, 0.5)}, PutPolicy::kKeepFaster).ok());
  REQUIRE(ImportEntries(*rewritten, {MatMulEntry(5, 8, 8, 0.5)}, PutPolicy::kKeepFaster).ok());
  auto put_counts = MergeInto(*by_puts, {source.get()}, false, MergeMethod::kPutEach);
  auto rewrite_counts = MergeInto(*rewritten, {source.get()}, false, MergeMethod::kRewrite);
  REQUIRE(put_counts.ok());
  REQUIRE_MESSAGE(rewrite_counts.ok(), rewrite_counts.status().message());
  CHECK(rewrite_counts->added[0] == 2999);
  CHECK(rewrite_counts->kept[0] == 1);
  CHECK(EveryRecord(*by_puts) == EveryRecord(*rewritten));
  // The premise: what was written does not fit the first map, so the map grew.
  CHECK(std::filesystem::file_size(dir / "rewritten" + "/data.mdb") > (size_t{1} << 20));
}

TEST_CASE("merge: a key collision in a source is refused by either method, nothing written") {
  TempDir dir;
  auto dst = CreateBank(dir / "dst");
  REQUIRE(ImportEntries(*dst, {MatMulEntry(1, 8, 8, 9.0), MatMulEntry(2, 8, 8, 9.0)}, PutPolicy::kKeepFaster).ok());
  dst.reset();
  // The destination holds entry 1's value under entry 2's key, as a hash collision would.
  RawPut(dir / "dst", "op", KeyString(MatMulEntry(2, 8, 8, 1).key()),
         RawGet(dir / "dst", "op", KeyString(MatMulEntry(1, 8, 8, 1).key())));
  {
    auto src = CreateBank(dir / "src");
    REQUIRE(ImportEntries(*src, {MatMulEntry(2, 8, 8, 1.0), MatMulEntry(3, 8, 8, 1.0)}, PutPolicy::kKeepFaster).ok());
  }
  auto src = OpenExisting(dir / "src", OpenMode::kReadOnly);
  dst = OpenExisting(dir / "dst");
  const std::string before = EveryRecord(*dst);
  for (MergeMethod method : {MergeMethod::kPutEach, MergeMethod::kRewrite}) {
    auto refused = MergeInto(*dst, {src.get()}, false, method);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("key collision") != std::string::npos);
    CHECK(EveryRecord(*dst) == before);
  }
}

TEST_CASE("merging another soc_version or a corrupt source is refused and writes nothing") {
  TempDir dir;
  auto dst = CreateBank(dir / "dst");
  auto other = CreateBank(dir / "other", "aarch64-arm-generic-neon-4c");
  REQUIRE(ImportEntries(*other, {MatMulEntry(8, 8, 8, 7.0)}, PutPolicy::kKeepFaster).ok());
  auto refused = MergeInto(*dst, {other.get()}, false);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kRefused);
  CHECK(refused.status().message().find("aarch64-arm-generic-neon-4c") != std::string::npos);
  CHECK(refused.status().message().find(kTestSoc) != std::string::npos);

  {
    auto src = CreateBank(dir / "src");
    REQUIRE(ImportEntries(*src, {MatMulEntry(1, 8, 8, 7.0), MatMulEntry(2, 8, 8, 7.0)}, PutPolicy::kKeepFaster).ok());
  }
  Entry victim = MatMulEntry(2, 8, 8, 7.0);
  std::string stored = RawGet(dir / "src", "op", KeyString(victim.key()));
  stored[stored.size() / 2] ^= 0x01;
  RawPut(dir / "src", "op", KeyString(victim.key()), stored);
  auto src = OpenExisting(dir / "src", OpenMode::kReadOnly);
  for (MergeMethod method : {MergeMethod::kPutEach, MergeMethod::kRewrite}) {
    auto corrupt = MergeInto(*dst, {src.get()}, false, method);
    REQUIRE_FALSE(corrupt.ok());
    CHECK(corrupt.status().message().find(FormatKey(EntryKind::kOp, victim.key())) != std::string::npos);
    CHECK(dst->Read()->Count(EntryKind::kOp) == 0);
  }
}
