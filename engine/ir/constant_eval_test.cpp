// Constant folding checked against ONNX's backend node tests: each single-node test whose op the
// registry has gets its inputs as initializers, is imported (ONNX infers the output shape) and
// folded by the registry's kernel; the folded value must have ONNX's shape and the test's expected values.
#include "engine/ir/constant_eval.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "engine/kernels/kernel_registry.h"
#include "engine/ir/onnx_import.h"
#include "engine/ir/tensor_proto.h"
#include "engine/core/tensor_compare.h"
#include "tests/test_support.h"
#include "tests/onnx_node_case.h"

namespace tilebank::engine::model {
namespace {

namespace fs = std::filesystem;

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

enum class Outcome { kSkipped, kMatched, kDiffered, kRefused };

// Runs one node test with its inputs made constants; kSkipped when it is not a single node of an op
// the registry has, or its tensors are of a type the importer does not read; kRefused when folding
// refuses the model (its kernel's result contradicts ONNX's inferred shape). The folded value is
// judged against the expected output as `run --data` judges outputs (engine/core/tensor_compare.h).
Outcome CheckNodeTest(const fs::path& dir, const std::string& scratch, std::string* why) {
  onnx::ModelProto model;
  if (!testing::ReadProtoFile(dir / "model.onnx", &model) || model.graph().node_size() != 1) return Outcome::kSkipped;
  const onnx::NodeProto node = model.graph().node(0);
  if (!kernels::KernelRegistry::Default().Has(node.op_type()) || node.op_type() == "Shape" || node.output_size() != 1) return Outcome::kSkipped;
  auto* g = model.mutable_graph();
  for (int i = 0; i < g->input_size(); ++i) {
    onnx::TensorProto t;
    if (!testing::ReadProtoFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), &t)) return Outcome::kSkipped;
    t.set_name(g->input(i).name());
    if (!ConstFromProto(t).ok()) return Outcome::kSkipped;
    *g->add_initializer() = t;
  }
  // The inputs stay listed: an initializer listed as an input is a constant (IR 3 needs them listed).
  auto expected = ReadTensorFile((dir / "test_data_set_0" / "output_0.pb").string());
  if (!expected.ok()) return Outcome::kSkipped;
  const fs::path path = fs::path(scratch) / (dir.filename().string() + ".onnx");
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  auto graph = ImportOnnx(path.string(), {});
  if (!graph.ok()) return Outcome::kSkipped;  // an opset or type the importer refuses
  std::vector<bool> known(graph->values.size(), true);
  auto folded = EvaluateConstantNodes(&graph.value(), &known);
  if (!folded.ok()) {
    *why = folded.status().message();
    return Outcome::kRefused;
  }
  const Value& out = graph->values[graph->outputs[0]];
  if (!out.constant) return Outcome::kSkipped;  // left to run time (a string, a random draw, ...)
  if (expected->dtype == DType::kUInt16 && out.dtype == "bfloat16") expected->dtype = DType::kBFloat16;  // ONNX 1.12's bfloat16 test data
  // A constant keeps floats as float32 and integers as int64 (ConstTensor): the value is judged in
  // its declared dtype.
  const TensorMatch m = MatchTensor(out.constant->AsTyped(ParseDType(out.dtype).value_or(DType::kFloat32)), *expected);
  if (!m.ok) {
    *why = m.worst;
    return Outcome::kDiffered;
  }
  return Outcome::kMatched;
}

TEST_CASE("constant evaluation matches ONNX's backend node tests of every op it folds") {
  REQUIRE_MESSAGE(fs::is_directory(kNodeTests), "install libonnx-testdata (scripts/setup.sh does)");
  testing::TempDir scratch;
  int matched = 0;
  std::set<std::string> ops;
  for (const auto& e : fs::directory_iterator(kNodeTests)) {
    std::string why;
    const Outcome outcome = CheckNodeTest(e.path(), scratch.path(), &why);
    const std::string name = e.path().filename().string();
    CHECK_MESSAGE(outcome != Outcome::kDiffered, name << ": " << why);
    // libonnx 1.12 infers STFT's onesided output as n_fft bins where the kernel (and ONNX's expected
    // output) has n_fft / 2 + 1: folding refuses the contradiction. No other case may be refused.
    if (outcome == Outcome::kRefused) CHECK_MESSAGE((name == "test_stft" || name == "test_stft_with_window"), name << ": " << why);
    if (outcome == Outcome::kMatched) {
      ++matched;
      onnx::ModelProto model;
      testing::ReadProtoFile(e.path() / "model.onnx", &model);
      ops.insert(model.graph().node(0).op_type());
    }
  }
  std::string names;
  for (const auto& op : ops) names += " " + op;
  MESSAGE(matched << " node tests folded and matched, ops:" << names);
  CHECK(matched >= 600);  // the registry's ops: a floor that only rises (the count printed above)
  for (const char* op : {"Gather", "Slice", "Concat", "Range", "Mod", "Where", "Equal", "ScatterND", "Expand", "Cast", "Div", "Reshape",
                         "Unsqueeze", "Squeeze", "Transpose", "Tile", "Trilu", "Not"})
    CHECK_MESSAGE(ops.count(op) == 1, std::string(op) << " was not checked by any node test");
}

// A graph of one node `op_type` reading constant `input` into a value of `shape`.
Graph OneNode(const std::string& op_type, ConstTensor input, std::vector<int64_t> shape) {
  Graph g;
  g.opset = 17;
  g.values.push_back({"in", input.shape, "int64", std::move(input)});
  g.values.push_back({"out", std::move(shape), "int64", std::nullopt});
  Node n;
  n.name = "node";
  n.op_type = op_type;
  n.inputs = {0};
  n.outputs = {1};
  g.nodes.push_back(n);
  return g;
}

TEST_CASE("a value too large to fold stays a node, and a folded shape that contradicts ONNX's is refused") {
  Graph g = OneNode("ConstantOfShape", ConstTensor::Ints({1}, {int64_t{1} << 40}), {});
  std::vector<bool> known = {true, false};
  auto folded = EvaluateConstantNodes(&g, &known);
  REQUIRE(folded.ok());
  CHECK(*folded == 0);
  CHECK(g.nodes.size() == 1);

  Graph h = OneNode("Neg", ConstTensor::Ints({2}, {1, 2}), {3});  // ONNX said 3 elements
  std::vector<bool> all_known = {true, true};
  auto refused = EvaluateConstantNodes(&h, &all_known);
  REQUIRE(!refused.ok());
  CHECK(refused.status().message().find("node 'node' (Neg)") != std::string::npos);
}

TEST_CASE("constant folding sums a small product as the reference does, in double (no sgemm, which makes its code on its first call)") {
  Graph g;
  g.opset = 17;
  // 1e8 + 1 - 1e8: 0 in float32 sums in k order, 1 in the reference's double ones.
  g.values.push_back({"a", {1, 3}, "float32", ConstTensor::Floats({1, 3}, {1e8f, 1.f, -1e8f})});
  g.values.push_back({"b", {3, 1}, "float32", ConstTensor::Floats({3, 1}, {1.f, 1.f, 1.f})});
  g.values.push_back({"c", {1, 1}, "float32", std::nullopt});
  Node n;
  n.name = "product";
  n.op_type = "MatMul";
  n.inputs = {0, 1};
  n.outputs = {2};
  g.nodes.push_back(n);
  std::vector<bool> known = {true, true, true};
  auto folded = EvaluateConstantNodes(&g, &known);
  REQUIRE(folded.ok());
  CHECK(*folded == 1);
  REQUIRE(g.values[2].constant.has_value());
  CHECK(g.values[2].constant->AsTyped(DType::kFloat32).data<float>()[0] == 1.f);
}

}  // namespace
}  // namespace tilebank::engine::model
