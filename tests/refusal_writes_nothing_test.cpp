// A refused command writes nothing: every command that writes (run --dump, run --tune online, tune
// -j 1/2, quantize, report, batch plan, bank import/merge/upgrade/copy) run over malformed models and
// inputs exits 2 with a message naming the problem, and leaves its working directory, its output
// directories and its banks byte for byte as they were (no file made, none changed).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <map>

#include "engine/core/soc_version.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

namespace fs = std::filesystem;

// Every file under `root` (relative path -> size and a hash of its bytes). LMDB's lock file is
// recorded as present only: a reader takes a slot in it, which is no write to the bank.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    if (e.is_directory()) files[rel + "/"] = "dir";
    else if (e.path().filename() == "lock.mdb") files[rel] = "lock";
    else {
      const std::string bytes = ReadFile(e.path().string());
      files[rel] = std::to_string(bytes.size()) + ":" + std::to_string(std::hash<std::string>{}(bytes));
    }
  }
  return files;
}

// The paths that differ between two snapshots, "" when none.
std::string Changes(const std::map<std::string, std::string>& before, const std::map<std::string, std::string>& after) {
  std::string changed;
  for (const auto& entry : after) {
    const auto it = before.find(entry.first);
    if (it == before.end()) changed += " made " + entry.first;
    else if (it->second != entry.second) changed += " changed " + entry.first;
  }
  for (const auto& entry : before)
    if (!after.count(entry.first)) changed += " removed " + entry.first;
  return changed;
}

// A model that is well formed but for what `spoil` does to it: x [1,3,8,8] -> Conv(w [4,3,3,3]) -> Relu.
std::string ConvModel(const std::string& path, const std::function<void(ModelBuilder&)>& spoil) {
  ModelBuilder b;
  b.Input("x", {1, 3, 8, 8});
  b.Weight("w", {4, 3, 3, 3});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y", {1, 4, 6, 6});
  spoil(b);
  return b.Save(path);
}

TEST_CASE("a refused command writes nothing: malformed models and inputs through every writing command") {
  TempDir dir;
  const std::string work = dir / "work", bank = work + "/bank", out = work + "/out", soc = HostSocVersion();
  fs::create_directories(out);
  WriteFile(out + "/kept.txt", "a file the user had here\n");
  {
    auto b = CreateBank(bank + "/" + soc, soc);
    REQUIRE(b->Write([&](WriteTxn& txn) { return txn.Put(MatMulEntry(64, 64, 64, 10.0), PutPolicy::kOverwrite).status(); }).ok());
  }
  CreateBank(work + "/newer/" + soc, soc);
  RawPut(work + "/newer/" + soc, "meta", "format_version", "3.0");
  CreateBank(work + "/other/" + kTestSoc, kTestSoc);

  // The malformed inputs, made before the snapshot.
  const std::string models = dir / "models";
  fs::create_directories(models);
  const std::string good = ConvModel(models + "/good.onnx", [](ModelBuilder&) {});
  std::map<std::string, std::string> bad_models;  // what is wrong -> the file
  bad_models["a Conv whose weights' channels disagree with its input's"] =
      ConvModel(models + "/channels.onnx", [](ModelBuilder& b) { b.g->mutable_initializer(0)->set_dims(1, 5); });
  bad_models["a node reading a value nothing defines"] =
      ConvModel(models + "/dangling.onnx", [](ModelBuilder& b) { b.g->mutable_node(1)->set_input(0, "nowhere"); });
  bad_models["an initializer whose data does not match its dims"] =
      ConvModel(models + "/short_weights.onnx", [](ModelBuilder& b) { b.g->mutable_initializer(0)->mutable_float_data()->RemoveLast(); });
  const std::string bytes = ReadFile(good);
  WriteFile(models + "/truncated.onnx", bytes.substr(0, bytes.size() / 2));
  bad_models["a file cut in half"] = models + "/truncated.onnx";
  WriteFile(models + "/text.onnx", "this is not an ONNX model\n");
  bad_models["a text file"] = models + "/text.onnx";
  WriteFile(models + "/bad.jsonl", "{\"format\": \"tilebank-export\", \"version\": \"1.0\"}\n{not json\n");
  WriteFile(models + "/bad_result.json", "[{\"not\": \"a result file\"}");

  std::map<std::string, std::string> before = Snapshot(work);
  const std::string env = "ASCEND_WORK_PATH=" + out + " TUNE_BANK_PATH=" + bank;
  for (const auto& bad : bad_models) {
    const std::string what = bad.first, model = bad.second;
    CAPTURE(what);
    const std::vector<std::string> commands = {
        "run -m " + model + " --repeat 1 --warmup 0 --dump " + out + "/dump --bank " + bank,
        "run -m " + model + " --tune online --trials 2 --repeat 1 --bank " + bank + " --output " + out,
        "tune -j 2 -m " + model + " --trials 2 --bank " + bank + " --output " + out,
        "tune -j 1 -m " + model + " --trials 2 --bank " + bank + " --output " + out,
        "quantize -m " + model + " --dynamic -o " + out + "/int8.onnx",
        "report --bank " + bank + " -m " + model + " -o " + out + "/bank.html",
        "batch plan -j 2 -m " + model + " --shards 2 -o " + out + "/plan.json",
    };
    for (const std::string& command : commands) {
      CAPTURE(command);
      const CommandResult r = RunCliIn(work, command, env);
      CHECK_MESSAGE(r.exit_code == 2, r.err);
      CHECK_MESSAGE(r.err.rfind("tilebank: error: ", 0) == 0, r.err);
      CHECK_MESSAGE(r.err.find(fs::path(model).filename().string()) != std::string::npos, "the message names the model: " << r.err);
      const std::string changed = Changes(before, Snapshot(work));
      CHECK_MESSAGE(changed.empty(), "it wrote:" << changed);
      before = Snapshot(work);  // a failure is reported once
    }
  }
  // The bank commands over malformed or refused inputs.
  const std::vector<std::pair<std::string, std::string>> bank_commands = {
      {"bank import " + models + "/bad.jsonl --bank " + bank, "bad.jsonl"},
      {"bank import " + models + "/bad.jsonl --bank " + work + "/fresh", "bad.jsonl"},
      {"bank merge " + work + "/newer --into " + bank, "newer"},
      {"bank merge " + work + "/other/" + kTestSoc + " --into " + bank + "/" + soc, "soc_version"},
      {"bank merge " + work + "/nowhere --into " + bank, "nowhere"},
      {"bank upgrade --bank " + work + "/newer", "newer"},
      {"bank copy " + work + "/newer " + work + "/copy", "newer"},
      {"report " + models + "/bad_result.json -o " + out + "/job.html", "bad_result.json"},
      {"tune -j 2 --singleop " + models + "/bad.jsonl --bank " + bank + " --output " + out, "bad.jsonl"},
  };
  for (const auto& bank_command : bank_commands) {
    const std::string command = bank_command.first, names = bank_command.second;
    CAPTURE(command);
    const CommandResult r = RunCliIn(work, command, env);
    CHECK_MESSAGE(r.exit_code == 2, r.err);
    CHECK_MESSAGE(r.err.rfind("tilebank: error: ", 0) == 0, r.err);
    CHECK_MESSAGE(r.err.find(names) != std::string::npos, "the message names " << names << ": " << r.err);
    const std::string changed = Changes(before, Snapshot(work));
    CHECK_MESSAGE(changed.empty(), "it wrote:" << changed);
    before = Snapshot(work);
  }
}

}  // namespace
}  // namespace tilebank::testing
