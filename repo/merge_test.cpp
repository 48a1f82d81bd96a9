#include "repo/merge.h"

#include <doctest/doctest.h>

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
  auto corrupt = MergeInto(*dst, {src.get()}, false);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.status().message().find(FormatKey(EntryKind::kOp, victim.key())) != std::string::npos);
  CHECK(dst->Read()->Count(EntryKind::kOp) == 0);
}
