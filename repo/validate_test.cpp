#include "repo/validate.h"

#include <doctest/doctest.h>

#include "repo/entry_codec.h"
#include "repo/jsonl.h"

#include <sstream>
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

namespace {

TemplateVersions Versions() {
  return [](std::string_view id) -> std::optional<uint32_t> {
    if (id == "impl.openblas" || id == "sgat.fusion" || id == "gdat.buckets") return 1;
    return std::nullopt;
  };
}

std::vector<Problem> Check(const std::string& dir) {
  auto bank = OpenExisting(dir, OpenMode::kReadOnly);
  auto problems = ValidateBank(*bank, kTestSoc, Versions());
  REQUIRE(problems.ok());
  return *problems;
}

bool Mentions(const std::vector<Problem>& problems, const std::string& words) {
  for (const Problem& p : problems)
    if ((p.where + ": " + p.what).find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a clean bank validates with no problems") {
  TempDir dir;
  {
    auto bank = CreateBank(dir / "b");
    REQUIRE(ImportEntries(*bank, {MatMulEntry(1, 8, 8, 5.0), GraphEntry(16, 3.0), GradEntry(2, 9.0)}, PutPolicy::kKeepFaster).ok());
    REQUIRE(ImportEntries(*bank, {MatMulEntry(1, 8, 8, 4.0)}, PutPolicy::kKeepFaster).ok());
  }
  CHECK(Check(dir / "b").empty());
}

TEST_CASE("validate reports stale, implausible, corrupt and misfiled entries") {
  TempDir dir;
  Entry stale = MatMulEntry(1, 8, 8, 5.0);
  stale.template_version = 7;
  Entry slower = MatMulEntry(2, 8, 8, 5.0, 4.0);
  Entry zero = MatMulEntry(3, 8, 8, 0.0, 4.0);
  Entry flipped = MatMulEntry(4, 8, 8, 5.0);
  Entry moved = MatMulEntry(5, 8, 8, 5.0);
  {
    auto bank = CreateBank(dir / "b");
    REQUIRE(ImportEntries(*bank, {stale, slower, zero, flipped, moved}, PutPolicy::kKeepFaster).ok());
  }
  std::string value = RawGet(dir / "b", "op", KeyString(flipped.key()));
  value[value.size() - 20] ^= 0x04;
  RawPut(dir / "b", "op", KeyString(flipped.key()), value);
  RawPut(dir / "b", "op", KeyString(12345), RawGet(dir / "b", "op", KeyString(moved.key())));

  auto problems = Check(dir / "b");
  CHECK(Mentions(problems, FormatKey(EntryKind::kOp, stale.key()) + ": stale"));
  CHECK(Mentions(problems, FormatKey(EntryKind::kOp, slower.key()) + ": implausible: the stored policy"));
  CHECK(Mentions(problems, FormatKey(EntryKind::kOp, zero.key()) + ": implausible: time"));
  CHECK(Mentions(problems, FormatKey(EntryKind::kOp, flipped.key()) + ": corrupt value: checksum"));
  CHECK(Mentions(problems, FormatKey(EntryKind::kOp, 12345) + ": key does not match"));
  CHECK(Mentions(problems, "shape index"));
}

TEST_CASE("validate reports a soc_version other than expected") {
  TempDir dir;
  { CreateBank(dir / "b", "x86_64-amd-zen3-avx2-8c"); }
  auto bank = OpenExisting(dir / "b", OpenMode::kReadOnly);
  auto problems = ValidateBank(*bank, kTestSoc, Versions());
  CHECK(Mentions(*problems, "soc_version is x86_64-amd-zen3-avx2-8c"));
}

TEST_CASE("validate reports text that is not UTF-8, and export still works") {
  TempDir dir;
  Entry odd = MatMulEntry(6, 8, 8, 5.0);
  odd.origin_host = "lab\xff\xfe";
  { CreateBank(dir / "b"); }
  RawPut(dir / "b", "op", KeyString(odd.key()), EncodeEntry(odd));  // checksummed, structurally valid
  auto problems = Check(dir / "b");
  CHECK(Mentions(problems, "not valid UTF-8"));
  auto bank = OpenExisting(dir / "b", OpenMode::kReadOnly);
  std::ostringstream out;
  CHECK(ExportBank(*bank->Read(), out).ok());
  CHECK(out.str().find("lab\xef\xbf\xbd") != std::string::npos);  // U+FFFD in place of the bad bytes
}
