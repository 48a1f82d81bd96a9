#include "repo/diff.h"

#include <doctest/doctest.h>

#include "repo/jsonl.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

TEST_CASE("diff finds keys only in A, only in B, and changed times") {
  TempDir dir;
  auto a = CreateBank(dir / "a");
  auto b = CreateBank(dir / "b");
  REQUIRE(ImportEntries(*a, {MatMulEntry(1, 8, 8, 5.0), MatMulEntry(2, 8, 8, 5.0), GradEntry(4, 9.0)}, PutPolicy::kKeepFaster).ok());
  REQUIRE(ImportEntries(*b, {MatMulEntry(2, 8, 8, 4.0), MatMulEntry(3, 8, 8, 5.0), GradEntry(4, 9.0)}, PutPolicy::kKeepFaster).ok());
  auto sa = a->Read();
  auto sb = b->Read();
  auto report = DiffBanks(*sa, std::nullopt, *sb, std::nullopt);
  REQUIRE(report.ok());
  REQUIRE(report->only_a.size() == 1);
  CHECK(report->only_a[0].key == MatMulEntry(1, 8, 8, 1).key());
  REQUIRE(report->only_b.size() == 1);
  CHECK(report->only_b[0].key == MatMulEntry(3, 8, 8, 1).key());
  REQUIRE(report->changed.size() == 1);
  CHECK(report->changed[0].b->after.median_us == 4.0);
  CHECK(DiffBanks(*sa, std::nullopt, *sa, std::nullopt)->equal());
}

TEST_CASE("diff of two generations of one bank") {
  TempDir dir;
  auto bank = CreateBank(dir / "a");
  REQUIRE(ImportEntries(*bank, {MatMulEntry(1, 8, 8, 5.0)}, PutPolicy::kKeepFaster).ok());                            // gen 1
  REQUIRE(ImportEntries(*bank, {MatMulEntry(1, 8, 8, 3.0), MatMulEntry(2, 8, 8, 5.0)}, PutPolicy::kKeepFaster).ok());  // gen 2
  REQUIRE(bank->Write([](WriteTxn& txn) { return txn.Remove(EntryKind::kOp, MatMulEntry(2, 8, 8, 1).key()).status(); }).ok());  // gen 3
  auto snap = bank->Read();
  auto one_two = DiffBanks(*snap, 1, *snap, 2);
  REQUIRE(one_two.ok());
  CHECK(one_two->only_a.empty());
  CHECK(one_two->only_b.size() == 1);
  REQUIRE(one_two->changed.size() == 1);
  CHECK(one_two->changed[0].a->after.median_us == 5.0);
  CHECK(one_two->changed[0].b->after.median_us == 3.0);
  auto two_three = DiffBanks(*snap, 2, *snap, std::nullopt);
  CHECK(two_three->only_a.size() == 1);
  CHECK(two_three->changed.empty());
  CHECK(DiffBanks(*snap, 0, *snap, 0)->equal());
  CHECK_FALSE(DiffBanks(*snap, 9, *snap, 1).ok());
}
