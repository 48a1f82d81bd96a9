#include "repo/bank.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "repo/entry_codec.h"
#include "repo/jsonl.h"
#include "repo/lookup.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

namespace {

Result<PutOutcome> PutOne(Bank& bank, const Entry& e, PutPolicy policy = PutPolicy::kKeepFaster) {
  Result<PutOutcome> outcome = Status::IoError("not run");
  Status s = bank.Write([&](WriteTxn& txn) {
    outcome = txn.Put(e, policy);
    return outcome.ok() ? Status::Ok() : outcome.status();
  });
  if (!s.ok()) return s;
  return outcome;
}

TemplateVersions Versions() {
  return [](std::string_view id) -> std::optional<uint32_t> {
    if (id == "impl.openblas" || id == "sgat.fusion" || id == "gdat.buckets") return 1;
    return std::nullopt;
  };
}

}  // namespace

TEST_CASE("a new bank records its soc_version, format and generation 0") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  CHECK(bank->meta_at_open().soc_version == kTestSoc);
  CHECK(bank->meta_at_open().format_major == kFormatMajor);
  CHECK(bank->meta_at_open().generation == 0);
  CHECK(bank->meta_at_open().bank_id.size() == 32);
  CHECK(bank->has_shape_index());
}

TEST_CASE("keep-faster: the faster entry wins, ties keep the existing one, losers go to history") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  Entry slow = MatMulEntry(64, 64, 64, 10.0);
  CHECK(*PutOne(*bank, slow) == PutOutcome::kAdded);
  CHECK(bank->meta_at_open().generation == 1);

  Entry slower = MatMulEntry(64, 64, 64, 12.0);
  CHECK(*PutOne(*bank, slower) == PutOutcome::kKept);
  Entry tie = MatMulEntry(64, 64, 64, 10.0, 0, "other-host");
  CHECK(*PutOne(*bank, tie) == PutOutcome::kKept);
  CHECK(bank->meta_at_open().generation == 1);  // nothing changed, no new generation

  Entry faster = MatMulEntry(64, 64, 64, 8.0);
  CHECK(*PutOne(*bank, faster) == PutOutcome::kUpdated);
  CHECK(bank->meta_at_open().generation == 2);

  auto found = bank->Find(EntryKind::kOp, faster.descriptor);
  REQUIRE(found.ok());
  REQUIRE(*found);
  CHECK((*found)->after.median_us == 8.0);
  CHECK((*found)->revision == 2);
  CHECK((*found)->generation == 2);

  auto snap = bank->Read();
  CHECK(snap->HistoryCount() == 1);
  int seen = 0;
  CHECK(snap->ForEachHistory([&](EntryKind kind, Key key, uint32_t revision, std::string_view) {
    CHECK(kind == EntryKind::kOp);
    CHECK(key == slow.key());
    CHECK(revision == 1);
    ++seen;
    return Status::Ok();
  }).ok());
  CHECK(seen == 1);
}

TEST_CASE("overwrite and keep-existing policies") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  REQUIRE(PutOne(*bank, MatMulEntry(32, 32, 32, 5.0)).ok());
  CHECK(*PutOne(*bank, MatMulEntry(32, 32, 32, 9.0), PutPolicy::kOverwrite) == PutOutcome::kUpdated);
  CHECK(*PutOne(*bank, MatMulEntry(32, 32, 32, 1.0), PutPolicy::kKeepExisting) == PutOutcome::kKept);
  CHECK(*PutOne(*bank, MatMulEntry(32, 32, 32, 9.0), PutPolicy::kOverwrite) == PutOutcome::kKept);  // identical
  auto found = bank->Find(EntryKind::kOp, MatMulEntry(32, 32, 32, 1).descriptor);
  CHECK((*found)->after.median_us == 9.0);
}

TEST_CASE("a failed write transaction leaves nothing behind") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  Status s = bank->Write([&](WriteTxn& txn) {
    REQUIRE(txn.Put(MatMulEntry(8, 8, 8, 1.0), PutPolicy::kKeepFaster).ok());
    return Status::InvalidInput("changed my mind");
  });
  CHECK_FALSE(s.ok());
  CHECK(bank->Read()->Count(EntryKind::kOp) == 0);
  CHECK(bank->meta_at_open().generation == 0);
}

TEST_CASE("the map grows when full") {
  TempDir dir;
  auto bank = CreateBank(dir / "b", kTestSoc, 64 * 1024);
  Status s = bank->Write([&](WriteTxn& txn) {
    for (int i = 1; i <= 3000; ++i) {
      auto outcome = txn.Put(MatMulEntry(i, 8, 8, 1.0), PutPolicy::kKeepFaster);
      if (!outcome.ok()) return outcome.status();
    }
    return Status::Ok();
  });
  REQUIRE_MESSAGE(s.ok(), s.message());
  CHECK(bank->Read()->Count(EntryKind::kOp) == 3000);
  MDB_envinfo info;
  mdb_env_info(bank->env(), &info);
  CHECK(info.me_mapsize > 64 * 1024);
}

TEST_CASE("opening refuses another soc_version, a newer format, a missing bank and a read-only one") {
  TempDir dir;
  { CreateBank(dir / "b"); }
  OpenOptions other;
  other.mode = OpenMode::kReadOnly;
  other.soc_version = "aarch64-arm-generic-neon-4c";
  auto refused = Bank::Open(dir / "b", other);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kRefused);
  CHECK(refused.status().message().find(kTestSoc) != std::string::npos);
  CHECK(refused.status().message().find("aarch64-arm-generic-neon-4c") != std::string::npos);

  auto missing = Bank::Open(dir / "nothing-here", OpenOptions{});
  CHECK(missing.status().code() == StatusCode::kNotFound);

  RawPut(dir / "b", "meta", "format_version", "2.0");
  auto newer = Bank::Open(dir / "b", OpenOptions{});
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().message().find("newer") != std::string::npos);
  RawPut(dir / "b", "meta", "format_version", "1.1");

  chmod((dir / "b").c_str(), 0555);
  OpenOptions write;
  write.mode = OpenMode::kReadWrite;
  auto read_only = Bank::Open(dir / "b", write);
  REQUIRE_FALSE(read_only.ok());
  CHECK(read_only.status().message().find("read-only") != std::string::npos);
  CHECK(Bank::Open(dir / "b", OpenOptions{}).ok());  // reading still works
  chmod((dir / "b").c_str(), 0755);
}

TEST_CASE("an older format is readable, refused for writing, and upgraded on request") {
  TempDir dir;
  {
    auto bank = CreateBank(dir / "b");
    REQUIRE(PutOne(*bank, MatMulEntry(16, 16, 16, 2.0)).ok());
    REQUIRE(PutOne(*bank, MatMulEntry(32, 16, 16, 3.0)).ok());
    // Make it a format-1.0 bank: no shape index.
    MDB_txn* txn;
    mdb_txn_begin(bank->env(), nullptr, 0, &txn);
    MDB_dbi shape;
    REQUIRE(mdb_dbi_open(txn, "shape_class", 0, &shape) == 0);
    REQUIRE(mdb_drop(txn, shape, 1) == 0);
    REQUIRE(mdb_txn_commit(txn) == 0);
  }
  RawPut(dir / "b", "meta", "format_version", "1.0");
  OpenOptions write;
  write.mode = OpenMode::kReadWrite;
  auto refused = Bank::Open(dir / "b", write);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("upgrade") != std::string::npos);
  auto reader = OpenExisting(dir / "b", OpenMode::kReadOnly);
  CHECK_FALSE(reader->has_shape_index());
  CHECK(reader->Find(EntryKind::kOp, MatMulEntry(16, 16, 16, 1).descriptor)->has_value());
  reader.reset();

  write.allow_older_format = true;
  auto bank = Bank::Open(dir / "b", write);
  REQUIRE(bank.ok());
  std::string what;
  REQUIRE((*bank)->Upgrade(&what).ok());
  CHECK(what.find("1.0 to 1.1") != std::string::npos);
  CHECK((*bank)->has_shape_index());
  bank->reset();
  auto upgraded = OpenExisting(dir / "b");
  CHECK(upgraded->meta_at_open().format_minor == kFormatMinor);
  auto nearest = LookupPolicy(*upgraded, *CanonicalizeOp(nlohmann::json::parse(
      R"({"op":"MatMul","input_desc":[{"shape":[30,16],"type":"float"},{"shape":[16,16],"type":"float"}],
          "output_desc":[{"shape":[30,16],"type":"float"}]})")), Versions(), true);
  REQUIRE(nearest.ok());
  CHECK(nearest->state == LookupState::kNearest);
  CHECK(nearest->entry->after.median_us == 3.0);  // 32 is closer to 30 than 16 is
}

TEST_CASE("lookups: hit, miss, stale and nearest") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  Entry current = MatMulEntry(128, 64, 64, 4.0);
  Entry stale = MatMulEntry(256, 64, 64, 6.0);
  stale.template_version = 0;
  REQUIRE(PutOne(*bank, current).ok());
  REQUIRE(PutOne(*bank, stale).ok());
  auto descriptor_of = [](const Entry& e) { return CanonicalDescriptor{e.kind, e.op_type, e.descriptor, e.key()}; };

  auto hit = LookupPolicy(*bank, descriptor_of(current), Versions(), false);
  CHECK(hit->state == LookupState::kHit);
  auto old = LookupPolicy(*bank, descriptor_of(stale), Versions(), false);
  CHECK(old->state == LookupState::kStale);
  CHECK(old->stale_reason.find("version 0") != std::string::npos);
  Entry absent = MatMulEntry(200, 64, 64, 1.0);
  CHECK(LookupPolicy(*bank, descriptor_of(absent), Versions(), false)->state == LookupState::kMiss);
  auto near = LookupPolicy(*bank, descriptor_of(absent), Versions(), true);
  CHECK(near->state == LookupState::kNearest);
  CHECK(near->entry->key() == current.key());  // the stale 256 entry is never handed out
  CHECK(near->shape_distance > 0);
  // Another rank is another shape class: no nearest.
  Entry batched = MatMulEntry(1, 1, 1, 1.0);
  batched.descriptor = R"({"attr":{},"in":[{"dtype":"float32","format":"ND","shape":[2,128,64]}],"op":"MatMul","out":[]})";
  CHECK(LookupPolicy(*bank, descriptor_of(batched), Versions(), true)->state == LookupState::kMiss);
}

TEST_CASE("a hash collision never hands out another descriptor's policy") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  Entry e = MatMulEntry(64, 64, 64, 3.0);
  REQUIRE(PutOne(*bank, e).ok());
  bank.reset();
  // Store the entry under the key of another descriptor, as a collision would.
  const std::string other = MatMulEntry(65, 64, 64, 3.0).descriptor;
  RawPut(dir / "b", "op", KeyString(KeyOfDescriptor(other)), RawGet(dir / "b", "op", KeyString(e.key())));
  auto reopened = OpenExisting(dir / "b");
  auto found = reopened->Find(EntryKind::kOp, other);
  REQUIRE(found.ok());
  CHECK_FALSE(found->has_value());
}

TEST_CASE("removing keeps the revision in history and revisions never repeat") {
  TempDir dir;
  auto bank = CreateBank(dir / "b");
  Entry e = MatMulEntry(48, 48, 48, 3.0);
  REQUIRE(PutOne(*bank, e).ok());
  REQUIRE(bank->Write([&](WriteTxn& txn) { return txn.Remove(EntryKind::kOp, e.key()).status(); }).ok());
  CHECK(bank->Read()->Count(EntryKind::kOp) == 0);
  REQUIRE(PutOne(*bank, e).ok());
  CHECK((*bank->Find(EntryKind::kOp, e.descriptor))->revision == 2);
}

TEST_CASE("a data.mdb left empty by a creator killed at once is no bank yet, and the next creator initializes it") {
  TempDir dir;
  const std::string b = dir / "b";
  std::filesystem::create_directories(b);
  { std::ofstream touch(b + "/data.mdb"); }
  OpenOptions read_only;
  read_only.mode = OpenMode::kReadOnly;
  auto none = Bank::Open(b, read_only);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kNotFound);  // was an I/O error (EBADF) from LMDB
  CHECK(none.status().message().find("interrupted creation") != std::string::npos);
  auto created = CreateBank(b);
  REQUIRE(created != nullptr);
  CHECK(created->meta_at_open().soc_version == kTestSoc);
}

TEST_CASE("ReleaseMappedPages: records read before and after stay the same") {
  TempDir dir;
  auto bank = CreateBank(dir / "bank");
  std::vector<Entry> entries;
  for (int m = 1; m <= 300; ++m) entries.push_back(MatMulEntry(m, 8, 8, 1.0 + m));
  REQUIRE(ImportEntries(*bank, entries, PutPolicy::kKeepFaster).ok());
  auto snapshot = bank->Read();
  REQUIRE(snapshot.ok());
  auto cursor = snapshot->Records(EntryKind::kOp);
  REQUIRE(cursor.ok());
  const std::string_view first = cursor->record();
  const std::string copy(first);
  bank->ReleaseMappedPages();
  CHECK(std::string(first) == copy);  // the view maps back in, unchanged
  size_t seen = 0;
  while (cursor->valid()) {
    if (++seen % 50 == 0) bank->ReleaseMappedPages();
    auto entry = DecodeEntry(cursor->record());
    REQUIRE(entry.ok());
    CHECK(entry->key() == cursor->key());
    REQUIRE(cursor->Next().ok());
  }
  CHECK(seen == entries.size());
}
