#include "repo/jsonl.h"

#include <doctest/doctest.h>

#include <sstream>

#include "repo/entry_json.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

namespace {

std::string Export(const Bank& bank) {
  std::ostringstream out;
  auto snap = bank.Read();
  REQUIRE(ExportBank(*snap, out).ok());
  return out.str();
}

Result<ParsedJsonl> Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseJsonl(in, "input.jsonl");
}

}  // namespace

TEST_CASE("export, import into an empty bank, export again: identical bytes") {
  TempDir dir;
  auto a = CreateBank(dir / "a");
  REQUIRE(ImportEntries(*a, {MatMulEntry(1, 2, 3, 4.5), GraphEntry(64, 30.25), GradEntry(8, 1000),
                              MatMulEntry(7, 7, 7, 0.125)},
                        PutPolicy::kKeepFaster)
              .ok());
  const std::string first = Export(*a);
  auto parsed = Parse(first);
  REQUIRE(parsed.ok());
  CHECK(*parsed->soc_version == kTestSoc);
  CHECK(parsed->entries.size() == 4);
  auto b = CreateBank(dir / "b");
  REQUIRE(ImportEntries(*b, parsed->entries, PutPolicy::kKeepFaster).ok());
  CHECK(Export(*b) == first);
}

TEST_CASE("the sample bank in data/ round-trips byte for byte") {
  TempDir dir;
  const std::string sample = ReadFile(SourcePath("data/sample_bank.jsonl"));
  REQUIRE_FALSE(sample.empty());
  auto parsed = Parse(sample);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
  auto bank = CreateBank(dir / "b", *parsed->soc_version);
  auto counts = ImportEntries(*bank, parsed->entries, PutPolicy::kKeepFaster);
  REQUIRE(counts.ok());
  CHECK(counts->added[0] >= 12);  // operator entries of real tuning runs (no SGAT or GDAT yet)
  CHECK(Export(*bank) == sample);
}

TEST_CASE("bad lines are named by line number and nothing is imported") {
  const std::string good = EntryToJson(MatMulEntry(4, 4, 4, 1.0)).dump();
  auto fails_at = [](const std::string& text, const std::string& line, const std::string& words) {
    auto parsed = Parse(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidInput);
    CHECK_MESSAGE(parsed.status().message().find("input.jsonl:" + line + ":") != std::string::npos, parsed.status().message());
    CHECK_MESSAGE(parsed.status().message().find(words) != std::string::npos, parsed.status().message());
  };
  fails_at(good + "\n" + good.substr(0, good.size() / 2) + "\n", "2", "not valid JSON");
  std::string bad_key = good;
  bad_key.replace(bad_key.find("\"key\":\"0x") + 9, 1, bad_key[bad_key.find("\"key\":\"0x") + 9] == 'f' ? "e" : "f");
  fails_at(good + "\n" + bad_key + "\n", "2", "hashes to");
  nlohmann::json unknown = nlohmann::json::parse(good);
  unknown["colour"] = "blue";
  fails_at(unknown.dump() + "\n", "1", "colour");
  nlohmann::json negative = nlohmann::json::parse(good);
  negative["trials"] = -3;
  fails_at(negative.dump() + "\n", "1", "trials");
  fails_at("{\"tilebank_export\":9,\"soc_version\":\"x\"}\n", "1", "newer");
  fails_at(good + "\n{\"tilebank_export\":1,\"soc_version\":\"x\"}\n", "2", "first line");
  nlohmann::json bad_time = nlohmann::json::parse(good);
  bad_time["created"] = "yesterday";
  fails_at(bad_time.dump() + "\n", "1", "created");
}

TEST_CASE("an entry may give a raw description instead of a canonical descriptor") {
  const std::string line = R"({"kind":"op","description":{"op":"Relu","input_desc":[{"shape":[4,4],"type":"float"}]},
    "template":{"id":"elementwise.generic","version":1},"tune_mode":"Schedule","policy":{"split":8},
    "before":{"median_us":2.0,"spread_us":0.1,"runs":10},"after":{"median_us":1.5,"spread_us":0.1,"runs":10},
    "trials":5,"strategy":"RL","created":"2026-01-02T03:04:05.006Z","tool_version":"0.1.0"})";
  std::string one_line = line;
  std::erase(one_line, '\n');
  auto parsed = Parse(one_line + "\n");
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
  const Entry& e = parsed->entries[0];
  CHECK(e.op_type == "Relu");
  CHECK(e.descriptor.find("\"op\":\"Relu\"") != std::string::npos);
  CHECK(e.created_unix_ms == 1767323045006);
  CHECK(e.revision == 1);
}
