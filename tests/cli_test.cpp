// The command line end to end: exit codes, messages, and that refused operations write nothing.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "repo/entry_json.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

namespace {

std::string BankArgs(const TempDir& dir, const std::string& name = "bank") {
  return "--bank " + (dir / name) + " --soc " + kTestSoc;
}

std::string ExportText(const TempDir& dir, const std::string& name = "bank") {
  auto r = RunCli("bank export -o - " + BankArgs(dir, name));
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("cli: a wrong flag or a missing argument is a usage error (exit 2)") {
  CheckRefused(RunCli("bank stats --no-such-flag"), "--no-such-flag");
  CheckRefused(RunCli("bank import"), "file is required");
  CheckRefused(RunCli("bank frobnicate"), "A subcommand is required");
  CheckRefused(RunCli("bank import x.jsonl --policy sometimes"), "--policy: sometimes not in");
  CHECK(RunCli("--help").exit_code == 0);
}

TEST_CASE("cli: import, query, export round trip and query exit codes") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 20, 10.0);
  auto imported = RunCli("bank import " + (dir / "in.jsonl") + " " + BankArgs(dir));
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("op    added 20") != std::string::npos);
  CHECK(ExportText(dir) == ReadFile(dir / "in.jsonl"));

  const std::string hit = R"('{"op":"MatMul","input_desc":[{"shape":[3,16],"type":"float"},{"shape":[16,16],"type":"fp32"}],"output_desc":[{"shape":[3,16],"type":"float32"}]}')";
  auto q = RunCli("bank query " + hit + " --json " + BankArgs(dir));
  REQUIRE(q.exit_code == 0);
  auto rows = nlohmann::json::parse(q.out);
  CHECK(rows[0]["state"] == "hit");
  CHECK(rows[0]["entry"]["after"]["median_us"] == 13.0);

  const std::string miss = R"('{"op":"MatMul","input_desc":[{"shape":[300,16],"type":"float"},{"shape":[16,16],"type":"float"}],"output_desc":[{"shape":[300,16],"type":"float"}]}')";
  CHECK(RunCli("bank query " + miss + " " + BankArgs(dir)).exit_code == 1);
  auto near = RunCli("bank query " + miss + " --fallback nearest --json " + BankArgs(dir));
  CHECK(near.exit_code == 0);
  CHECK(nlohmann::json::parse(near.out)[0]["state"] == "nearest");
  auto bad = RunCli("bank query '{\"op\":\"MatMul\"}' " + BankArgs(dir));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("input_desc") != std::string::npos);
  CHECK(RunCli("bank query --key 0x1 " + BankArgs(dir)).exit_code == 1);
  CheckRefused(RunCli("bank query --key nonsense " + BankArgs(dir)), "bad key 'nonsense'");
}

TEST_CASE("cli: a malformed import file is refused by line and writes nothing") {
  TempDir dir;
  WriteEntriesFile(dir / "good.jsonl", 1, 5, 10.0);
  REQUIRE(RunCli("bank import " + (dir / "good.jsonl") + " " + BankArgs(dir)).exit_code == 0);
  const std::string before = ExportText(dir);

  WriteEntriesFile(dir / "bad.jsonl", 100, 10, 1.0);
  std::string text = ReadFile(dir / "bad.jsonl");
  text.resize(text.size() - 40);  // truncated last line
  WriteFile(dir / "bad.jsonl", text);
  auto r = RunCli("bank import " + (dir / "bad.jsonl") + " " + BankArgs(dir));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.jsonl:11:") != std::string::npos);
  CHECK(r.err.find("nothing was imported") != std::string::npos);
  CHECK(ExportText(dir) == before);

  WriteEntriesFile(dir / "other.jsonl", 1, 5, 1.0, "aarch64-arm-generic-neon-4c");
  auto soc = RunCli("bank import " + (dir / "other.jsonl") + " " + BankArgs(dir));
  CHECK(soc.exit_code == 2);
  CHECK(soc.err.find("aarch64-arm-generic-neon-4c") != std::string::npos);
  CHECK(ExportText(dir) == before);

  CheckRefused(RunCli("bank import " + (dir / "missing.jsonl") + " " + BankArgs(dir)), "cannot read '" + (dir / "missing.jsonl") + "'");
}

TEST_CASE("cli: a newer-format bank, a missing bank and a read-only bank are refused") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 5, 10.0);
  REQUIRE(RunCli("bank import " + (dir / "in.jsonl") + " " + BankArgs(dir)).exit_code == 0);
  const std::string bank_dir = (dir / "bank") + "/" + kTestSoc;

  chmod(bank_dir.c_str(), 0555);
  WriteEntriesFile(dir / "more.jsonl", 50, 5, 1.0);
  auto ro = RunCli("bank import " + (dir / "more.jsonl") + " " + BankArgs(dir));
  CHECK(ro.exit_code == 2);
  CHECK(ro.err.find("read-only") != std::string::npos);
  chmod(bank_dir.c_str(), 0755);
  CHECK(ExportText(dir) == ReadFile(dir / "in.jsonl"));

  auto missing = RunCli("bank stats --bank " + (dir / "nowhere") + " --soc " + kTestSoc);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("no bank") != std::string::npos);

  RawPut(bank_dir, "meta", "format_version", "3.0");
  auto newer = RunCli("bank stats " + BankArgs(dir));
  CHECK(newer.exit_code == 2);
  CHECK(newer.err.find("newer") != std::string::npos);
  CheckRefused(RunCli("bank import " + (dir / "more.jsonl") + " " + BankArgs(dir)), "newer");
  CheckRefused(RunCli("bank upgrade " + BankArgs(dir)), "newer");
}

TEST_CASE("cli: the sample banks in data/ import and validate clean (template versions and policies are the engine's)") {
  for (const char* file : {"data/sample_bank.jsonl", "data/sample_bank_lab2.jsonl"}) {
    CAPTURE(file);
    TempDir dir;
    const std::string text = ReadFile(SourcePath(file));
    const std::string soc = nlohmann::json::parse(text.substr(0, text.find('\n'))).at("soc_version");
    const std::string bank = "--bank " + (dir / "bank") + " --soc " + soc;
    REQUIRE(RunCli("bank import " + SourcePath(file) + " " + bank).exit_code == 0);
    auto validate = RunCli("bank validate " + bank);
    CHECK_MESSAGE(validate.exit_code == 0, std::string(validate.out + validate.err));
  }
}

TEST_CASE("cli: validate is silent when clean, exit 1 naming a flipped byte") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 5, 10.0);
  REQUIRE(RunCli("bank import " + (dir / "in.jsonl") + " " + BankArgs(dir)).exit_code == 0);
  auto clean = RunCli("bank validate " + BankArgs(dir));
  CHECK(clean.exit_code == 0);
  CHECK(clean.out.empty());

  const std::string bank_dir = (dir / "bank") + "/" + kTestSoc;
  const Key key = MatMulEntry(3, 16, 16, 1).key();
  std::string value = RawGet(bank_dir, "op", KeyString(key));
  value[30] ^= 0x20;
  RawPut(bank_dir, "op", KeyString(key), value);
  auto dirty = RunCli("bank validate " + BankArgs(dir));
  CHECK(dirty.exit_code == 1);
  CHECK(dirty.out.find(FormatKey(EntryKind::kOp, key)) != std::string::npos);
  // Reading the damaged entry is an error, never a wrong policy.
  auto q = RunCli("bank query --key " + FormatKey(EntryKind::kOp, key) + " " + BankArgs(dir));
  CHECK(q.exit_code == 2);
  CHECK(q.err.find("checksum") != std::string::npos);
}

TEST_CASE("cli: merge, diff and generations") {
  TempDir dir;
  WriteEntriesFile(dir / "a.jsonl", 1, 10, 10.0);
  WriteEntriesFile(dir / "b.jsonl", 6, 10, 5.0);
  REQUIRE(RunCli("bank import " + (dir / "a.jsonl") + " " + BankArgs(dir, "a")).exit_code == 0);
  REQUIRE(RunCli("bank import " + (dir / "b.jsonl") + " " + BankArgs(dir, "b")).exit_code == 0);
  CHECK(RunCli("bank diff " + (dir / "a") + " " + (dir / "a") + " --soc " + kTestSoc).exit_code == 0);
  auto d = RunCli("bank diff " + (dir / "a") + " " + (dir / "b") + " --soc " + kTestSoc);
  CHECK(d.exit_code == 1);
  CHECK(d.out.find("5 only in A, 5 only in B, 5 changed") != std::string::npos);
  CheckRefused(RunCli("bank diff " + (dir / "a") + " " + (dir / "nowhere") + " --soc " + kTestSoc), "no bank at '" + (dir / "nowhere"));

  auto dry = RunCli("bank merge " + (dir / "b") + " --into " + (dir / "a") + " --dry-run --soc " + kTestSoc);
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.find("added 5, updated 5, kept 0") != std::string::npos);
  CHECK(ExportText(dir, "a") == ReadFile(dir / "a.jsonl"));

  auto merged = RunCli("bank merge " + (dir / "b") + " --into " + (dir / "a") + " --soc " + kTestSoc);
  CHECK(merged.exit_code == 0);
  CHECK(merged.out.find("added 5, updated 5, kept 0") != std::string::npos);
  auto gens = RunCli("bank diff " + (dir / "a") + "@1 " + (dir / "a") + " --json --soc " + kTestSoc);
  CHECK(gens.exit_code == 1);
  auto report = nlohmann::json::parse(gens.out);
  CHECK(report["only_in_b"].size() == 5);
  CHECK(report["changed"].size() == 5);
  CHECK(report["changed"][0]["time_ratio"].get<double>() < 1.0);
  auto log = RunCli("bank log " + FormatKey(EntryKind::kOp, MatMulEntry(7, 16, 16, 1).key()) + " --json " + BankArgs(dir, "a"));
  CHECK(log.exit_code == 0);
  CHECK(nlohmann::json::parse(log.out).size() == 2);
}

TEST_CASE("cli: merging banks of different soc_versions is refused naming both, nothing written") {
  TempDir dir;
  WriteEntriesFile(dir / "a.jsonl", 1, 5, 10.0);
  WriteEntriesFile(dir / "arm.jsonl", 1, 5, 1.0, "aarch64-arm-generic-neon-4c");
  REQUIRE(RunCli("bank import " + (dir / "a.jsonl") + " " + BankArgs(dir, "a")).exit_code == 0);
  REQUIRE(RunCli("bank import " + (dir / "arm.jsonl") + " --bank " + (dir / "arm")).exit_code == 0);
  const std::string dst = (dir / "a") + "/" + kTestSoc;
  const std::string src = (dir / "arm") + "/aarch64-arm-generic-neon-4c";
  auto r = RunCli("bank merge " + src + " --into " + dst);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("aarch64-arm-generic-neon-4c") != std::string::npos);
  CHECK(r.err.find(kTestSoc) != std::string::npos);
  auto roots = RunCli("bank merge " + (dir / "arm") + " --into " + (dir / "a") + " --soc " + kTestSoc);
  CHECK(roots.exit_code == 2);
  CHECK(roots.err.find("aarch64-arm-generic-neon-4c") != std::string::npos);
  CHECK(ExportText(dir, "a") == ReadFile(dir / "a.jsonl"));
}

TEST_CASE("cli: copy, compact copy, stale pruning, stats") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 8, 10.0);
  std::string text = ReadFile(dir / "in.jsonl");
  text.replace(text.find("\"version\":1"), 11, "\"version\":0");  // one entry made by an old template
  WriteFile(dir / "in.jsonl", text);
  REQUIRE(RunCli("bank import " + (dir / "in.jsonl") + " " + BankArgs(dir)).exit_code == 0);
  auto stats = RunCli("bank stats --json " + BankArgs(dir));
  REQUIRE(stats.exit_code == 0);
  auto s = nlohmann::json::parse(stats.out);
  CHECK(s["entries"]["op"] == 8);
  CHECK(s["stale"] == 1);
  CHECK(s["op_types"]["MatMul"] == 8);
  CHECK(RunCli("bank validate " + BankArgs(dir)).exit_code == 1);

  REQUIRE(RunCli("bank copy " + (dir / "bank") + " " + (dir / "copy") + " --compact --soc " + kTestSoc).exit_code == 0);
  CHECK(RunCli("bank diff " + (dir / "bank") + " " + (dir / "copy") + " --soc " + kTestSoc).exit_code == 0);
  CheckRefused(RunCli("bank copy " + (dir / "bank") + " " + (dir / "copy") + " --soc " + kTestSoc), "already holds a bank");

  auto pruned = RunCli("bank prune --stale " + BankArgs(dir));
  CHECK(pruned.exit_code == 0);
  CHECK(pruned.out.find("pruned 1 stale entry") != std::string::npos);
  CHECK(RunCli("bank validate " + BankArgs(dir)).exit_code == 0);
  CheckRefused(RunCli("bank prune " + BankArgs(dir)), "say what to prune");
}

TEST_CASE("cli: a failed export leaves no partial file") {
  TempDir dir;
  WriteEntriesFile(dir / "in.jsonl", 1, 3, 10.0);
  REQUIRE(RunCli("bank import " + (dir / "in.jsonl") + " " + BankArgs(dir)).exit_code == 0);
  auto r = RunCli("bank export -o " + (dir / "no/such/dir/out.jsonl") + " " + BankArgs(dir));
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "no"));
}

TEST_CASE("cli: a policy no kernel can run is a validate problem and is refused by import and merge") {
  TempDir dir;
  // The knobs of the old sample banks: not knobs of matmul.tiled.
  Entry bad = MatMulEntry(8, 16, 16, 5.0);
  bad.template_id = "matmul.tiled";
  bad.tune_mode = TuneMode::kSchedule;
  bad.policy = {{"layout", std::string("nk")}, {"tile_k", int64_t{128}}, {"tile_n", int64_t{64}}};
  const std::string key = FormatKey(EntryKind::kOp, bad.key());
  {
    auto bank = CreateBank(dir / "bad" + "/" + kTestSoc);  // written through the library, which does not judge policies
    REQUIRE(bank->Write([&](WriteTxn& txn) { return txn.Put(bad, PutPolicy::kOverwrite).status(); }).ok());
  }
  auto validate = RunCli("bank validate " + BankArgs(dir, "bad"));
  CHECK(validate.exit_code == 1);
  CHECK_MESSAGE(validate.out.find(key) != std::string::npos, validate.out);
  CHECK_MESSAGE(validate.out.find("knob 'layout' is not a knob of matmul.tiled") != std::string::npos, validate.out);

  // import: exit 2, no bank created.
  std::ofstream(dir / "bad.jsonl") << nlohmann::json{{"tilebank_export", 1}, {"soc_version", kTestSoc}}.dump() << "\n"
                                   << EntryToJson(MatMulEntry(4, 16, 16, 5.0)).dump() << "\n" << EntryToJson(bad).dump() << "\n";
  auto import = RunCli("bank import " + (dir / "bad.jsonl") + " " + BankArgs(dir, "fresh"));
  CHECK(import.exit_code == 2);
  CHECK_MESSAGE(import.err.find(key) != std::string::npos, import.err);
  CHECK(import.err.find("tile_k") == std::string::npos);  // the first wrong knob (by name) is named
  CHECK(import.err.find("'layout'") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "fresh"));

  // merge: exit 2, the destination unchanged.
  WriteEntriesFile(dir / "good.jsonl", 1, 3, 10.0);
  REQUIRE(RunCli("bank import " + (dir / "good.jsonl") + " " + BankArgs(dir, "dst")).exit_code == 0);
  const std::string before = ExportText(dir, "dst");
  auto merge = RunCli("bank merge " + (dir / "bad") + " --into " + (dir / "dst") + "/" + kTestSoc);  // a root as the source
  CHECK(merge.exit_code == 2);
  CHECK_MESSAGE(merge.err.find(key) != std::string::npos, merge.err);
  CHECK(ExportText(dir, "dst") == before);
}
