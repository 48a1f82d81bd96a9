// No crash on any model input: each way a model, its path or its test data can be wrong ends in
// exit 2 with a message that names the problem (and nothing half written), and text that is not
// UTF-8 in a model still gives valid JSON wherever tilebank writes JSON.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

// x [4,8] -> MatMul w [8,8] -> Relu -> y, node names as given.
ModelBuilder MatMulRelu(const std::string& matmul_name, const std::string& relu_name) {
  ModelBuilder b;
  b.Input("x", {4, 8});
  b.Weight("w", {8, 8});
  b.Node("MatMul", {"x", "w"}, {"h"})->set_name(matmul_name);
  b.Node("Relu", {"h"}, {"y"})->set_name(relu_name);
  b.Output("y", {4, 8});
  return b;
}

nlohmann::json ParseFile(const std::string& path) {
  auto j = nlohmann::json::parse(ReadFile(path), nullptr, false);
  CHECK_MESSAGE(!j.is_discarded(), path << " is not valid JSON");
  return j;
}

TEST_CASE("a tensor in external data whose offset or length is not a byte count is refused by name") {
  TempDir dir;
  for (const char* field : {"offset", "length"}) {
    for (const char* value : {"12abc", "", "-4", "99999999999999999999999"}) {
      ModelBuilder b = MatMulRelu("mm", "relu");
      b.MakeExternal(0, "w.bin", {{field, value}});
      WriteFile(dir / "w.bin", std::string(8 * 8 * 4, '\0'));
      const std::string model = b.Save(dir / "external.onnx");
      auto r = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "none"));
      CHECK_MESSAGE(r.exit_code == 2, field << "=" << value << ": " << r.err);
      CHECK_MESSAGE(r.err.find(std::string("its ") + field + " '" + value + "' is not a byte count") != std::string::npos, r.err);
    }
  }
}

TEST_CASE("a tensor whose external data names a directory is refused by name, not read as a huge file") {
  TempDir dir;
  ModelBuilder b = MatMulRelu("mm", "relu");
  b.MakeExternal(0, "weights");
  std::filesystem::create_directories(dir / "weights");  // found by fuzz/onnx_import_fuzz: a bad_alloc
  const std::string model = b.Save(dir / "external.onnx");
  auto r = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "none"));
  CHECK_MESSAGE(r.exit_code == 2, r.err);
  CHECK_MESSAGE(r.err.find("external file 'weights': it is not a regular file") != std::string::npos, r.err);
}

TEST_CASE("node names that are not UTF-8: run --dump and tune -j 2 -m write valid JSON") {
  TempDir dir;
  const std::string model = MatMulRelu("mm\xff\xfe", "relu\xc3").Save(dir / "names.onnx");
  auto dump = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "none") + " --dump " + (dir / "dump"));
  REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);
  const auto ops = ParseFile(dir / "dump/aoe_dump/names_ops.json");
  REQUIRE(ops.size() == 1);  // the Relu runs inside the MatMul (the built-in fusion)
  CHECK(ops[0]["name"] == "mm\xef\xbf\xbd\xef\xbf\xbd");  // each bad byte is U+FFFD
  ParseFile(dir / "dump/aoe_dump/names_subgraphs.json");

  auto tune = RunCli("tune -j 2 -m " + model + " --bank " + (dir / "bank") + " --trials 2 --output " + (dir / "out"));
  REQUIRE_MESSAGE(tune.exit_code == 0, tune.err);
  int results = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) {
    if (e.path().extension() == ".jsonl") {  // the trials file: a JSON object a line
      std::istringstream lines(ReadFile(e.path().string()));
      for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(!nlohmann::json::parse(line, nullptr, false).is_discarded(), line);
    } else {
      ParseFile(e.path().string());
    }
    ++results;
  }
  CHECK(results == 3);  // the result file, the model's op list and the trials file
  CHECK(RunCli("bank validate --bank " + (dir / "bank")).exit_code == 0);
}

TEST_CASE("a model path that cannot be looked at is refused, not thrown") {
  TempDir dir;
  std::filesystem::create_symlink(dir / "loop", dir / "loop");  // stat fails with ELOOP, not ENOENT
  for (const std::string& path : {dir / "loop/model.onnx", dir / (std::string(300, 'n') + ".onnx")}) {
    auto run = RunCli("run -m " + path + " --repeat 1 --bank " + (dir / "none"));
    CHECK_MESSAGE(run.exit_code == 2, run.err);
    CHECK_MESSAGE(run.err.find("cannot read model") != std::string::npos, run.err);
    auto tune = RunCli("tune -j 2 -m " + path + " --bank " + (dir / "bank") + " --output " + (dir / "out"));
    CheckRefusedWritingNothing(tune, "cannot read model", {dir / "bank", dir / "out"});
    auto sgat = RunCli("tune -j 1 -m " + path + " --bank " + (dir / "bank") + " --output " + (dir / "out"));
    CheckRefusedWritingNothing(sgat, "cannot read model", {dir / "bank", dir / "out"});
  }
  // A bank root that cannot be looked at either.
  const std::string model = MatMulRelu("mm", "relu").Save(dir / "ok.onnx");
  auto bank = RunCli("tune -j 1 -m " + model + " --bank " + (dir / "loop") + " --output " + (dir / "out"));
  CHECK_MESSAGE(bank.exit_code == 2, bank.err);
}

TEST_CASE("folding a Gather of constants checks its indices") {
  TempDir dir;
  for (int64_t index : {3, -4, 1000000}) {
    // The index is computed (Neg of its negation), so ONNX's data propagation does not see its value; folding does.
    ModelBuilder b;
    b.Input("x", {2, 3});
    b.Ints("table", {10, 20, 30});
    b.Ints("minus_at", {-index});
    b.Node("Neg", {"minus_at"}, {"index"});
    b.Node("Gather", {"table", "index"}, {"picked"});
    b.Node("Relu", {"x"}, {"y"});
    b.Output("y", {2, 3});
    b.Output("picked", {1});
    b.g->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    auto r = RunCli("run -m " + b.Save(dir / "gather.onnx") + " --repeat 1 --bank " + (dir / "none"));
    CHECK_MESSAGE(r.exit_code == 2, r.err);
    CHECK_MESSAGE(r.err.find("index " + std::to_string(index) + " is outside a dimension of 3") != std::string::npos, r.err);
  }
}

TEST_CASE("run --data: test data without expected outputs compares nothing and is refused") {
  TempDir dir;
  const std::string model = MatMulRelu("mm", "relu").Save(dir / "m.onnx");
  std::filesystem::create_directories(dir / "data");
  {
    onnx::TensorProto x;
    x.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {4, 8}) x.add_dims(d);
    for (int i = 0; i < 32; ++i) x.add_float_data(0.5f);
    WriteFile(dir / "data/input_0.pb", x.SerializeAsString());
  }
  auto r = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "none") + " --data " + (dir / "data"));
  CHECK_MESSAGE(r.exit_code == 2, r.err);
  CHECK_MESSAGE(r.err.find("no output_<i>.pb in " + (dir / "data")) != std::string::npos, r.err);
}

TEST_CASE("run --profile names a row-major output row-major in text as in JSON") {
  TempDir dir;
  const std::string model = MatMulRelu("mm", "relu").Save(dir / "m.onnx");
  auto text = RunCli("run -m " + model + " --repeat 1 --profile --bank " + (dir / "none"));
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  auto json = RunCli("run -m " + model + " --repeat 1 --profile --json --bank " + (dir / "none"));
  REQUIRE(json.exit_code == 0);
  for (const auto& node : nlohmann::json::parse(json.out)["profile"]) {
    const std::string name = node["name"], layout = node["layout"];
    CHECK(layout == "row-major");
    const size_t line = text.out.find("\n" + name + " ");
    REQUIRE_MESSAGE(line != std::string::npos, text.out);
    const std::string row = text.out.substr(line + 1, text.out.find('\n', line + 1) - line - 1);
    CHECK_MESSAGE(row.find(" " + layout + " ") != std::string::npos, row);
  }
  CHECK(text.out.find("nchw") == std::string::npos);
}

TEST_CASE("run --json says where the load went: five phases within load_s, and each node's bind time") {
  TempDir dir;
  const std::string model = MatMulRelu("mm", "relu").Save(dir / "m.onnx");
  auto r = RunCli("run -m " + model + " --repeat 1 --profile --json --bank " + (dir / "none"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json out = nlohmann::json::parse(r.out);
  REQUIRE(out.contains("load_phases_s"));
  const nlohmann::json& phases = out["load_phases_s"];
  double sum = 0;
  for (const char* phase : {"read", "onnx_passes", "graph", "bind", "finish"}) {
    CAPTURE(phase);
    REQUIRE(phases.contains(phase));
    const double seconds = phases[phase];
    CHECK(seconds >= 0);
    sum += seconds;
  }
  CHECK(phases["onnx_passes"].get<double>() > 0);  // a child process ran libonnx's passes
  CHECK(phases["bind"].get<double>() > 0);
  CHECK(sum <= out["load_s"].get<double>());
  REQUIRE(!out["profile"].empty());
  double bind_ms = 0;
  for (const auto& node : out["profile"]) {
    REQUIRE(node.contains("bind_ms"));
    CHECK(node["bind_ms"].get<double>() >= 0);
    bind_ms += node["bind_ms"].get<double>();
  }
  CHECK(bind_ms > 0);
  CHECK(bind_ms <= phases["bind"].get<double>() * 1e3);
}

TEST_CASE("models that crashed libonnx 1.12 (found by fuzz/onnx_import_fuzz) are refused with exit 2") {
  TempDir dir;
  WriteFile(dir / "weights.bin", std::string(4096, 'w'));  // the external data they name
  const std::vector<std::pair<std::string, std::string>> cases = {
      // A graph output no node computes: the version converter dereferenced it.
      {"regression_undefined_output_converter_segv.onnx", "output 'y' is not computed by any node"},
      // Conv attributes that do not fit its input: shape inference read past them.
      {"regression_conv_shape_inference_segv.onnx", "crashed (signal 11"},
  };
  for (const auto& c : cases) {
    const std::string& file = c.first;
    const std::string& message = c.second;
    std::filesystem::copy_file(SourcePath("fuzz/corpus/onnx_import_fuzz/" + file), dir / file);
    auto r = RunCli("run -m " + (dir / file) + " --repeat 1 --bank " + (dir / "none"));
    CHECK_MESSAGE(r.exit_code == 2, file << ": " << r.err);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, file << ": " << r.err);
  }
}

}  // namespace
}  // namespace tilebank::testing
