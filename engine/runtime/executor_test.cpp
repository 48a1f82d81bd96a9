// The executor on small models built here: results against plain loops, buffer reuse, reshapes
// that copy nothing, folding of shape arithmetic and of BatchNormalization, and every bad input
// (truncated or non-ONNX files, missing external data, unfixed dynamic dimensions, missing ops).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/backends/onednn/own_conv_test_support.h"
#include "engine/catalog/template_registry.h"
#include "engine/core/threads.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/node_op_spec.h"
#include "engine/ir/onnx_import.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::RunCli;
using testing::TempDir;
using testing::ModelBuilder;

std::vector<Tensor> RunOnce(Executor& e, const std::vector<Tensor>& inputs) {
  std::vector<const Tensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  std::vector<Tensor> out;
  Status s = e.Run(in, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out;
}

TEST_CASE("executor: MatMul, bias, Relu, Reshape and Transpose against plain loops, reshapes alias, pointwise ops write in place") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {8, 32});
  auto w = b.Weight("w", {32, 24});
  auto bias = b.Weight("bias", {24});
  b.Ints("shape", {8, 4, 6});
  b.Node("MatMul", {"x", "w"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"biased"});
  b.Node("Relu", {"biased"}, {"act"});
  b.Node("Reshape", {"act", "shape"}, {"r"});
  auto* t = b.Node("Transpose", {"r"}, {"y"});
  auto* perm = t->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int p : {1, 0, 2}) perm->add_ints(p);
  b.Output("y", {4, 8, 6});
  auto e = LoadModel(b.Save(dir / "m.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  const Graph& g = (*e)->graph();
  auto inputs = RandomInputs(g, 3);
  auto out = RunOnce(**e, inputs);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape == std::vector<int64_t>{4, 8, 6});
  const auto& x = inputs[0].data;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 24; ++j) {
      double acc = bias[j];
      for (int k = 0; k < 32; ++k) acc += x[i * 32 + k] * w[k * 24 + j];
      const double want = std::max(0.0, acc);
      const int a = j / 6, c = j % 6;  // r[i][a][c] -> y[a][i][c]
      CHECK(out[0].data[(a * 8 + i) * 6 + c] == doctest::Approx(want).epsilon(1e-4));
    }
  bool aliased = false;
  for (const auto& binding : (*e)->bindings()) aliased |= binding.op_type == "Reshape" && binding.policy_source == "alias";
  CHECK(aliased);
  // x (256 floats) dies at the MatMul; the bias Add and the Relu write over mm in place, the
  // Reshape aliases it, and y (192) reuses x's memory: 448 floats where 5 tensors were computed.
  CHECK((*e)->arena_bytes() == (256 + 192) * sizeof(float));
}

TEST_CASE("executor: a stored policy this host's target cannot run gives way to the built-in choice, the reason kept") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {8, 32});
  b.Weight("w", {32, 24});
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y", {8, 24});
  auto graph = ImportModel(b.Save(dir / "m.onnx"), {});
  REQUIRE(graph.ok());
  // 4 vectors x 12 rows need 53 vector registers: more than any x86 or Arm target has.
  const Policy too_wide = MakePolicy({{"vec_blocks", int64_t{4}}, {"tile_m", int64_t{12}}, {"block_n", int64_t{1}}, {"block_m", int64_t{1}},
                                      {"unroll_k", int64_t{1}}, {"loop_order", std::string("mn")}, {"parallel", int64_t{0}},
                                      {"pack_b", std::string("block")}});
  PolicyLookup lookup = [&](const OpSpec& op) -> std::optional<FoundPolicy> {
    Entry e;
    e.kind = EntryKind::kOp;
    e.op_type = op.op_type;
    e.descriptor = op.canonical.text;
    e.template_id = "matmul.tiled";
    e.policy = too_wide;
    return FoundPolicy{e, false};
  };
  auto e = Executor::Load(*graph, lookup);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  const NodeBinding& mm = (*e)->bindings().front();
  CHECK(mm.policy_source == "builtin");
  CHECK_MESSAGE(mm.policy_note.find("cannot run on this host's target") != std::string::npos, mm.policy_note);
  CHECK_MESSAGE(mm.policy_note.find("breaks matmul.tiled's constraints") != std::string::npos, mm.policy_note);
  auto inputs = RandomInputs((*e)->graph(), 1);
  CHECK(RunOnce(**e, inputs).front().shape == std::vector<int64_t>{8, 24});
}

TEST_CASE("executor: a convolution's built-in fusion takes one whole-sized Add as its sum and stops before a second whole-sized operand") {
  // RepVGG's three branches summed: conv + conv1x1 + identity, then Relu. oneDNN would run the
  // second whole-sized Add as a full-tensor binary post-op, read row-major, many times slower.
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 16, 10, 10});
  b.Input("y", {1, 16, 10, 10});
  b.Input("z", {1, 16, 10, 10});
  const std::vector<float> w = b.Weight("w", {16, 16, 3, 3});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c", "y"}, {"s1"});
  b.Node("Add", {"s1", "z"}, {"s2"});
  b.Node("Relu", {"s2"}, {"out"});
  b.Output("out", {1, 16, 10, 10});
  auto e = LoadModel(b.Save(dir / "m.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  const NodeBinding& conv = (*e)->bindings().front();
  // The first Add only; none where oneDNN's kernel would start its sums from the residual (AVX2).
  const Graph& g = (*e)->graph();
  auto conv_op = NodeOpSpec(g, *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "Conv"; }));
  REQUIRE(conv_op.ok());
  CHECK(conv.op_type == (OneDnnConvAddsResidualOnce(conv_op->op) ? "Conv+Add" : "Conv"));
  auto inputs = RandomInputs((*e)->graph(), 7);
  auto out = RunOnce(**e, inputs);
  // Against the convolution in double with both branches as one residual, then Relu.
  ConvProblem p;
  p.N = 1, p.C = p.OC = p.Cg = p.OCg = 16, p.H = p.W = p.OH = p.OW = 10, p.KH = p.KW = 3, p.ph = p.pw = p.ph_end = p.pw_end = 1;
  std::vector<float> branches(inputs[1].data.size());
  for (size_t i = 0; i < branches.size(); ++i) branches[i] = inputs[1].data[i] + inputs[2].data[i];
  const std::vector<double> want = own_conv_test::Reference(p, inputs[0].data, w, {}, branches, "Relu");
  const double worst = own_conv_test::WorstError(out[0].data, want);
  CHECK(worst < 1e-4);
}

TEST_CASE("executor: a convolution's residual Add of a large grid rounds once, as the Add alone would") {
  // RAFT's flow update: coordinates (up to 127) plus a convolution's small update, the grid
  // subtracted again. Accumulated from the residual (oneDNN's direct JIT kernels below AVX-512), each
  // of the 576 products rounds at 127's precision and the update comes back off by 1e-4.
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 64, 32, 32});
  const std::vector<float> w = b.Weight("w", {2, 64, 3, 3});
  std::vector<float> grid(2 * 32 * 32);
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = 100.f + static_cast<float>(i % 1024) * 0.027f;
  b.Floats("grid", {1, 2, 32, 32}, grid);
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c", "grid"}, {"moved"});
  b.Node("Sub", {"moved", "grid"}, {"flow"});
  b.Output("moved", {1, 2, 32, 32});
  b.Output("flow", {1, 2, 32, 32});
  auto e = LoadModel(b.Save(dir / "m.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  auto inputs = RandomInputs((*e)->graph(), 3);
  auto out = RunOnce(**e, inputs);
  REQUIRE(out.size() == 2);
  ConvProblem p;
  p.N = 1, p.C = p.Cg = 64, p.OC = p.OCg = 2, p.H = p.W = p.OH = p.OW = 32, p.KH = p.KW = 3, p.ph = p.pw = p.ph_end = p.pw_end = 1;
  const std::vector<double> want = own_conv_test::Reference(p, inputs[0].data, w, {}, {}, "");
  double worst = 0;  // absolute: float32 sums and the grid's rounding stay within 3e-5; from the grid, 2e-4
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(out[1].data[i] - want[i]));
  CHECK_MESSAGE(worst < 8e-5, "worst absolute error of the flow: " << worst);
}

TEST_CASE("executor: bound again with the answers it was bound with, a model keeps its policies whatever the bank answers by then") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {8, 32});
  b.Weight("w1", {32, 24});
  b.Weight("w2", {24, 16});
  b.Node("MatMul", {"x", "w1"}, {"y"});
  b.Node("MatMul", {"y", "w2"}, {"z"});
  b.Output("z", {8, 16});
  auto graph = ImportModel(b.Save(dir / "m.onnx"), {});
  REQUIRE(graph.ok());
  // The bank answers the first operator asked about; once "changed", every one.
  bool changed = false;
  std::set<std::string> answered;
  PolicyLookup bank_now = [&](const OpSpec& op) -> std::optional<FoundPolicy> {
    if (!changed && !answered.empty() && !answered.count(op.canonical.text)) return std::nullopt;
    answered.insert(op.canonical.text);
    const OpTemplate* t = TemplateById("matmul.tiled");
    REQUIRE(t);
    Entry e;
    e.kind = EntryKind::kOp;
    e.op_type = op.op_type;
    e.descriptor = op.canonical.text;
    e.template_id = t->id();
    e.policy = t->DefaultPolicy(op);
    return FoundPolicy{e, false};
  };
  auto sources = [](const Executor& e) {
    std::vector<std::string> s;
    for (const NodeBinding& nb : e.bindings()) s.push_back(nb.name + ":" + nb.policy_source + ":" + nb.template_id);
    return s;
  };
  auto first = Executor::Load(*graph, bank_now);
  REQUIRE_MESSAGE(first.ok(), first.status().message());
  const std::vector<std::string> as_first = sources(**first);
  REQUIRE(as_first.size() == 2);
  CHECK(std::count_if(as_first.begin(), as_first.end(), [](const std::string& s) { return s.find(":bank:") != std::string::npos; }) == 1);
  changed = true;
  auto now = Executor::Load(*graph, bank_now);  // the bank as it answers now: both operators from it
  REQUIRE(now.ok());
  for (const std::string& s : sources(**now)) CHECK_MESSAGE(s.find(":bank:") != std::string::npos, s);
  auto again = Executor::Load(*graph, (*first)->LookupAsBound());
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(sources(**again) == as_first);
  auto inputs = RandomInputs((*again)->graph(), 1);
  const std::vector<Tensor> want = RunOnce(**first, inputs), got = RunOnce(**again, inputs);
  CHECK(got.front().data == want.front().data);
}

TEST_CASE("executor: a Split's outputs (one unused, one a model output) each computed as a Slice of the input") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {2, 9});
  b.Ints("sizes", {2, 3, 4});
  ModelBuilder::IntAttr(b.Node("Split", {"x", "sizes"}, {"a", "unused", "c"}), "axis", 1);
  b.Node("Relu", {"a"}, {"ra"});
  b.Output("ra", {2, 2});
  b.Output("c", {2, 4});
  auto e = LoadModel(b.Save(dir / "m.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  int slices = 0;
  for (const Node& n : (*e)->graph().nodes) slices += n.op_type == "Slice";
  CHECK(slices == 2);
  auto inputs = RandomInputs((*e)->graph(), 5);
  auto out = RunOnce(**e, inputs);
  REQUIRE(out.size() == 2);
  const auto& x = inputs[0].data;
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 2; ++j) CHECK(out[0].data[r * 2 + j] == std::max(0.f, x[r * 9 + j]));
    for (int j = 0; j < 4; ++j) CHECK(out[1].data[r * 4 + j] == x[r * 9 + 5 + j]);
  }
}

TEST_CASE("executor: outputs declared without a shape (as ONNX Runtime and later ONNX releases take them) load with their shapes inferred") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {3, 8});
  ModelBuilder::IntsAttr(b.Node("ReduceMax", {"x"}, {"m"}), "axes", {1});
  b.Node("Relu", {"x"}, {"r"});
  b.Output("m", {3, 1});
  b.Output("r", {3, 8});
  for (auto& out : *b.model.mutable_graph()->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  auto e = LoadModel(b.Save(dir / "m.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  auto inputs = RandomInputs((*e)->graph(), 2);
  auto out = RunOnce(**e, inputs);
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape == std::vector<int64_t>{3, 1});
  CHECK(out[1].shape == std::vector<int64_t>{3, 8});
  for (int r = 0; r < 3; ++r) CHECK(out[0].data[r] == *std::max_element(inputs[0].data.begin() + r * 8, inputs[0].data.begin() + r * 8 + 8));
}

TEST_CASE("executor: shape arithmetic folds to constants, BatchNormalization folds into the Conv before it") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 3, 8, 8});
  b.Weight("w", {4, 3, 3, 3});
  for (const char* p : {"scale", "shift", "mean"}) b.Weight(p, {4});
  auto var = b.Weight("var", {4});
  for (auto& v : *b.g->mutable_initializer(b.g->initializer_size() - 1)->mutable_float_data()) v = std::fabs(v) + 0.5f;
  b.Ints("zero", {0});
  b.Ints("minus_one", {-1});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"bn"});
  b.Node("Shape", {"bn"}, {"s"});
  b.Node("Gather", {"s", "zero"}, {"n"});
  ModelBuilder::IntAttr(b.Node("Concat", {"n", "minus_one"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"bn", "target"}, {"y"});
  b.Output("y", {1, 144});
  const std::string path = b.Save(dir / "m.onnx");
  auto graph = ImportOnnx(path, {});
  REQUIRE_MESSAGE(graph.ok(), graph.status().message());
  auto e = LoadModel(path, {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  std::vector<std::string> types;
  for (const auto& n : (*e)->graph().nodes) types.push_back(n.op_type);
  CHECK(types == std::vector<std::string>{"Conv", "Reshape"});
  auto inputs = RandomInputs((*e)->graph(), 5);
  auto out = RunOnce(**e, inputs);
  CHECK(out[0].shape == std::vector<int64_t>{1, 4 * 6 * 6});
  // Against the unfolded form: conv, then (c - mean) / sqrt(var + eps) * scale + shift.
  const auto& in = b.g->initializer();
  auto values = [&](int i) { return std::vector<float>(in[i].float_data().begin(), in[i].float_data().end()); };
  auto w = values(0), scale = values(1), shift = values(2), mean = values(3), v = values(4);
  const auto& x = inputs[0].data;
  for (int oc = 0; oc < 4; ++oc)
    for (int oy = 0; oy < 6; ++oy)
      for (int ox = 0; ox < 6; ++ox) {
        double acc = 0;
        for (int c = 0; c < 3; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) acc += x[(c * 8 + oy + ky) * 8 + ox + kx] * w[((oc * 3 + c) * 3 + ky) * 3 + kx];
        const double want = (acc - mean[oc]) / std::sqrt(v[oc] + 1e-5) * scale[oc] + shift[oc];
        CHECK(out[0].data[(oc * 6 + oy) * 6 + ox] == doctest::Approx(want).epsilon(1e-4));
      }
}

TEST_CASE("run: bad models exit 2 with the problem named and nothing written") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {2, 4});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", {2, 4});
  const std::string good = b.Save(dir / "good.onnx");
  auto run = [&](const std::string& args) { return RunCli("run --repeat 1 --warmup 0 --bank " + (dir / "bank") + " " + args); };
  CHECK(run("-m " + good).exit_code == 0);

  std::string bytes;
  b.model.SerializeToString(&bytes);
  std::ofstream(dir / "truncated.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(dir / "text.onnx") << "this is not a model\n";
  for (const char* name : {"truncated.onnx", "text.onnx", "absent.onnx"}) {
    auto r = run("-m " + (dir / name));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(name) != std::string::npos, r.err);
  }

  ModelBuilder dynamic;
  auto* in = dynamic.g->add_input();
  ModelBuilder::SetShape(in, "tokens", {1, 4});
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  dynamic.Node("Relu", {"tokens"}, {"y"});
  dynamic.Output("y", {1, 4});
  const std::string dyn = dynamic.Save(dir / "dynamic.onnx");
  auto unfixed = run("-m " + dyn);
  CHECK(unfixed.exit_code == 2);
  CHECK(unfixed.err.find("'tokens'") != std::string::npos);
  CHECK(unfixed.err.find("--input-shape") != std::string::npos);
  CHECK(run("-m " + dyn + " --input-shape tokens:3,4").exit_code == 0);

  ModelBuilder external;
  external.Input("x", {2, 4});
  external.Weight("w", {2, 4});
  external.MakeExternal(0, "weights.bin");
  external.Node("Add", {"x", "w"}, {"y"});
  external.Output("y", {2, 4});
  auto missing = run("-m " + external.Save(dir / "external.onnx"));
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("weights.bin") != std::string::npos);
  std::vector<float> data(8, 1.f);
  std::ofstream(dir / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(data.data()), 32);
  CHECK(run("-m " + (dir / "external.onnx")).exit_code == 0);

  // Ops the registry has no kernel for (MaxRoiPool, Multinomial): each named once, with its nodes.
  ModelBuilder unknown;
  unknown.Input("x", {1, 2, 4, 4});
  unknown.Floats("rois", {1, 5}, {0, 0, 0, 3, 3});
  ModelBuilder::IntsAttr(unknown.Node("MaxRoiPool", {"x", "rois"}, {"a"}), "pooled_shape", {2, 2});
  ModelBuilder::IntsAttr(unknown.Node("MaxRoiPool", {"a", "rois"}, {"b"}), "pooled_shape", {1, 1});
  unknown.Node("Flatten", {"b"}, {"c"});
  unknown.Node("Multinomial", {"c"}, {"y"});
  ModelBuilder::SetShape(unknown.g->add_output(), "y", {1, 1}, onnx::TensorProto::INT32);
  auto ops = run("-m " + unknown.Save(dir / "unknown.onnx"));
  CHECK(ops.exit_code == 2);
  CHECK_MESSAGE(ops.err.find("MaxRoiPool (MaxRoiPool_a, MaxRoiPool_b)") != std::string::npos, ops.err);
  CHECK(ops.err.find("Multinomial (Multinomial_y)") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bank"));
}

TEST_CASE("executor: convolutions built ahead on a second thread bind and run as those built in graph order") {
  TempDir dir;
  ModelBuilder b;
  // A ResNet stem and 3x3 convolutions, fused with Relu and alone, one weight read twice.
  b.Input("x", {1, 3, 56, 56});
  b.Weight("stem", {64, 3, 7, 7});
  auto* stem = b.Node("Conv", {"x", "stem"}, {"s"});
  ModelBuilder::IntsAttr(stem, "pads", {3, 3, 3, 3});
  ModelBuilder::IntsAttr(stem, "strides", {2, 2});
  std::string last = "s";
  for (int k = 0; k < 6; ++k) {
    const std::string w = k == 5 ? "w1" : "w" + std::to_string(k), y = "c" + std::to_string(k);
    if (k != 5) b.Weight(w, {64, 64, 3, 3});
    ModelBuilder::IntsAttr(b.Node("Conv", {last, w}, {y}), "pads", {1, 1, 1, 1});
    last = y;
    if (k % 2 == 0) {
      b.Node("Relu", {y}, {y + "r"});
      last = y + "r";
    }
  }
  b.Output(last, {1, 64, 28, 28});
  const std::string path = b.Save(dir / "convs.onnx");
  // Both layouts: NCHW convolutions run oneDNN's im2col GEMM, whose scratchpad a kernel made on
  // the second thread must find on the thread that runs it (caller_scratchpad.h).
  for (const char* layout : {"auto", "plain"}) {
    CAPTURE(layout);
    auto graph = ImportModel(path, {});
    REQUIRE(graph.ok());
    PolicyLookup lookup = [&](const OpSpec& op) -> std::optional<FoundPolicy> {
      if (op.op_type != "Conv") return std::nullopt;
      Entry e;
      e.kind = EntryKind::kOp;
      e.op_type = op.op_type;
      e.descriptor = op.canonical.text;
      e.template_id = OneDnnImpl().id();
      e.policy = MakePolicy({{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string(layout)}});
      return FoundPolicy{e, false};
    };
    const int threads = LibraryThreadsHere();
    UseLibraryThreadsHere(2);
    // First, and run first, while this thread has made no primitive of its own.
    setenv("TILEBANK_PARALLEL_BIND", "all", 1);  // every convolution built on the second thread
    auto ahead = Executor::Load(*graph, lookup, BankFusionLookup(nullptr), LoadOptions{/*run_only=*/true});
    REQUIRE_MESSAGE(ahead.ok(), ahead.status().message());
    const std::vector<Tensor> inputs = RandomInputs((*ahead)->graph(), 3);
    const auto a = RunOnce(**ahead, inputs);
    setenv("TILEBANK_PARALLEL_BIND", "on", 1);  // the two threads racing, as a load with it on runs
    auto racing = Executor::Load(*graph, lookup, BankFusionLookup(nullptr), LoadOptions{/*run_only=*/true});
    setenv("TILEBANK_PARALLEL_BIND", "off", 1);
    auto in_order = Executor::Load(*graph, lookup, BankFusionLookup(nullptr), LoadOptions{/*run_only=*/true});
    unsetenv("TILEBANK_PARALLEL_BIND");
    UseLibraryThreadsHere(threads);
    REQUIRE_MESSAGE(racing.ok(), racing.status().message());
    REQUIRE_MESSAGE(in_order.ok(), in_order.status().message());
    CHECK((*ahead)->kernels_built_ahead() == 7);
    CHECK((*in_order)->kernels_built_ahead() == 0);
    REQUIRE((*ahead)->bindings().size() == (*in_order)->bindings().size());
    for (size_t i = 0; i < (*ahead)->bindings().size(); ++i) {
      CHECK((*ahead)->bindings()[i].op_type == (*in_order)->bindings()[i].op_type);
      CHECK((*ahead)->bindings()[i].policy == (*in_order)->bindings()[i].policy);
    }
    const auto o = RunOnce(**in_order, inputs), r = RunOnce(**racing, inputs);
    REQUIRE(a.size() == 1);
    CHECK(a[0].data == o[0].data);
    CHECK(r[0].data == o[0].data);
  }
}

TEST_CASE("executor: a model of an older opset converts with its weights held once, and runs as the same model at opset 17") {
  // Opset 12 -> 17 in libonnx's converter (a child process), the 128 KiB and 256 KiB weights sent
  // back without their data and put back from the model read here; Split's sizes move from an
  // attribute to an initializer the converter makes.
  TempDir dir;
  std::vector<std::string> paths;
  for (int opset : {12, 17}) {
    ModelBuilder b;
    b.model.mutable_opset_import(0)->set_version(opset);
    b.Input("x", {4, 64});
    b.Weight("w", {64, 512});
    b.Node("MatMul", {"x", "w"}, {"m"});
    auto* split = opset == 12 ? b.Node("Split", {"m"}, {"a", "c"}) : nullptr;
    if (split) {
      ModelBuilder::IntAttr(split, "axis", 1);
      ModelBuilder::IntsAttr(split, "split", {128, 384});
    } else {
      b.Ints("sizes", {128, 384});
      ModelBuilder::IntAttr(b.Node("Split", {"m", "sizes"}, {"a", "c"}), "axis", 1);
    }
    b.Weight("v", {384, 160});
    b.Node("MatMul", {"c", "v"}, {"y"});
    b.Output("a", {4, 128});
    b.Output("y", {4, 160});
    paths.push_back(b.Save(dir / ("opset" + std::to_string(opset) + ".onnx")));
  }
  auto old_opset = LoadModel(paths[0], {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  auto current = LoadModel(paths[1], {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  REQUIRE_MESSAGE(old_opset.ok(), old_opset.status().message());
  REQUIRE_MESSAGE(current.ok(), current.status().message());
  const std::vector<Tensor> inputs = RandomInputs((*current)->graph(), 4);
  const auto got = RunOnce(**old_opset, inputs), want = RunOnce(**current, inputs);
  REQUIRE(got.size() == 2);
  CHECK(got[0].data == want[0].data);
  CHECK(got[1].data == want[1].data);
}

TEST_CASE("executor: a 3-D convolution's weights, packed by its kernel at load, are freed there, and runs compute the same") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 3, 4, 6, 6});
  b.Weight("w", {4, 3, 3, 3, 3});
  b.Weight("bias", {4});
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w", "bias"}, {"a"}), "pads", {1, 1, 1, 1, 1, 1});
  b.Node("Relu", {"a"}, {"y"});
  b.Output("y", {1, 4, 4, 6, 6});
  const std::string path = b.Save(dir / "conv3d.onnx");
  // run_only: the typed weights go once the kernel holds its packed copy, at load; the other keeps them all.
  auto freeing = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  auto keeping = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/false});
  REQUIRE_MESSAGE(freeing.ok(), freeing.status().message());
  REQUIRE_MESSAGE(keeping.ok(), keeping.status().message());
  const std::vector<Tensor> first = RandomInputs((*keeping)->graph(), 7), second = RandomInputs((*keeping)->graph(), 8);
  const uint64_t weights_and_bias = (4 * 3 * 3 * 3 * 3 + 4) * sizeof(float);
  CHECK((*freeing)->typed_constant_bytes() == 0);  // packed at load (OpKernel::PrepareAhead)
  CHECK((*keeping)->typed_constant_bytes() == weights_and_bias);
  for (const auto* inputs : {&first, &second, &first}) {
    const auto got = RunOnce(**freeing, *inputs), want = RunOnce(**keeping, *inputs);
    REQUIRE(got.size() == 1);
    CHECK(got[0].data == want[0].data);
    CHECK((*freeing)->typed_constant_bytes() == 0);
    CHECK((*keeping)->typed_constant_bytes() == weights_and_bias);
  }
}

TEST_CASE("executor: a bidirectional LSTM's W, R and B, packed by oneDNN's RNN kernel at load, are freed there, and runs compute the same") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {40, 1, 24});
  b.Weight("w", {2, 64, 24});
  b.Weight("r", {2, 64, 16});
  b.Weight("bias", {2, 128});
  auto* lstm = b.Node("LSTM", {"x", "w", "r", "bias"}, {"y", "h"});
  ModelBuilder::IntAttr(lstm, "hidden_size", 16);
  ModelBuilder::StrAttr(lstm, "direction", "bidirectional");
  b.Output("y", {40, 2, 1, 16});
  b.Output("h", {2, 1, 16});
  const std::string path = b.Save(dir / "lstm.onnx");
  auto freeing = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  auto keeping = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/false});
  REQUIRE_MESSAGE(freeing.ok(), freeing.status().message());
  REQUIRE_MESSAGE(keeping.ok(), keeping.status().message());
  const std::vector<Tensor> first = RandomInputs((*keeping)->graph(), 7), second = RandomInputs((*keeping)->graph(), 8);
  const uint64_t weights = (2 * 64 * 24 + 2 * 64 * 16 + 2 * 128) * sizeof(float);
  CHECK((*freeing)->typed_constant_bytes() == 0);  // packed at load (OpKernel::PrepareAhead)
  CHECK((*keeping)->typed_constant_bytes() == weights);
  for (const auto* inputs : {&first, &second, &first}) {
    const auto got = RunOnce(**freeing, *inputs), want = RunOnce(**keeping, *inputs);
    REQUIRE(got.size() == 2);
    CHECK(got[0].data == want[0].data);
    CHECK(got[1].data == want[1].data);
    CHECK((*freeing)->typed_constant_bytes() == 0);
  }
}

TEST_CASE("executor: loaded to run only, the graph frees its weights as the steps take them, and runs the same") {
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {1, 64, 6, 6});
  b.Weight("w", {128, 64, 3, 3});  // 288 KiB: a direct step's, prepacked
  b.Weight("bias", {128});          // small: stays
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w", "bias"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Ints("rows", {128, 36});
  b.Node("Reshape", {"c", "rows"}, {"flat"});
  b.Weight("shared", {36, 512});  // 72 KiB, read by two products
  b.Node("MatMul", {"flat", "shared"}, {"p"});
  b.Node("Relu", {"p"}, {"r"});
  b.Ints("back", {512, 36});
  b.Node("Reshape", {"r", "back"}, {"r2"});
  b.Node("MatMul", {"r2", "shared"}, {"q"});
  b.Output("q", {512, 512});
  const std::string path = b.Save(dir / "weights.onnx");
  auto kept = LoadModel(path, {}, nullptr);
  auto run_only = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  REQUIRE_MESSAGE(kept.ok(), kept.status().message());
  REQUIRE_MESSAGE(run_only.ok(), run_only.status().message());
  const Graph& g = (*run_only)->graph();
  for (const Value& v : g.values) {
    if (!v.constant || v.constant->type != ConstTensor::Type::kFloat) continue;
    CAPTURE(v.name);
    const bool large = v.constant->size() * sizeof(float) >= 64 * 1024;
    CHECK(v.constant->floats.empty() == large);
  }
  const std::vector<Tensor> inputs = RandomInputs((*kept)->graph(), 9);
  const Comparison same = CompareTensors(RunOnce(**run_only, inputs), RunOnce(**kept, inputs));
  CHECK_MESSAGE(same.ok, same.worst);
  auto swapped = (*run_only)->SwapSteps("any", OneDnnImpl(), {});
  REQUIRE_FALSE(swapped.ok());
  CHECK(swapped.status().message().find("run only") != std::string::npos);
}

TEST_CASE("executor: independent branches side by side on two threads compute what they compute in turn") {
  TempDir dir;
  ModelBuilder b;
  // A fork into two convolution chains of equal cost, joined by a Concat.
  b.Input("x", {1, 16, 12, 12});
  b.Weight("w1", {16, 16, 1, 1});
  b.Weight("w2", {16, 16, 3, 3});
  b.Weight("w3", {16, 16, 3, 3});
  b.Weight("w4", {16, 16, 1, 1});
  b.Node("Relu", {"x"}, {"fork"});
  b.Node("Conv", {"fork", "w1"}, {"a1"});
  ModelBuilder::IntsAttr(b.Node("Conv", {"a1", "w2"}, {"a2"}), "pads", {1, 1, 1, 1});
  ModelBuilder::IntsAttr(b.Node("Conv", {"fork", "w3"}, {"b1"}), "pads", {1, 1, 1, 1});
  b.Node("Conv", {"b1", "w4"}, {"b2"});
  ModelBuilder::IntAttr(b.Node("Concat", {"a2", "b2"}, {"y"}), "axis", 1);
  b.Output("y", {1, 32, 12, 12});
  const std::string path = b.Save(dir / "branches.onnx");
  const int threads = LibraryThreadsHere();
  UseLibraryThreadsHere(2);
  LoadOptions side_by_side{/*run_only=*/true};
  side_by_side.branches = BranchMode::kOn;
  auto lanes = LoadModel(path, {}, nullptr, {}, side_by_side);
  auto in_turn = LoadModel(path, {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  REQUIRE_MESSAGE(lanes.ok(), lanes.status().message());
  REQUIRE_MESSAGE(in_turn.ok(), in_turn.status().message());
  int in_lane[2] = {0, 0};
  for (const NodeBinding& binding : (*lanes)->bindings())
    if (binding.lane >= 0) ++in_lane[binding.lane];
  for (const NodeBinding& binding : (*in_turn)->bindings()) CHECK(binding.lane == -1);
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<Tensor> inputs = RandomInputs((*in_turn)->graph(), seed);
    const Comparison same = CompareTensors(RunOnce(**lanes, inputs), RunOnce(**in_turn, inputs));
    CHECK_MESSAGE(same.ok, same.worst);
  }
  UseLibraryThreadsHere(1);  // one thread: no second lane, every step in turn
  auto one_thread = LoadModel(path, {}, nullptr, {}, side_by_side);
  UseLibraryThreadsHere(threads);
  REQUIRE_MESSAGE(one_thread.ok(), one_thread.status().message());
  for (const NodeBinding& binding : (*one_thread)->bindings()) CHECK(binding.lane == -1);
  // Each conv chain is a lane.
  CHECK(in_lane[0] == 2);
  CHECK(in_lane[1] == 2);
}

TEST_CASE("executor: an Expand to its input's own shape (a slice assignment's) aliases its input, and one that broadcasts computes") {
  // x [2, 3, 4] -> Expand to [2, 3, 4] -> Relu -> y; x -> Expand to [2, 2, 3, 4] -> z.
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {2, 3, 4});
  b.Ints("same", {2, 3, 4});
  b.Ints("wider", {2, 2, 3, 4});
  b.Node("Expand", {"x", "same"}, {"e"});
  b.Node("Relu", {"e"}, {"y"});
  b.Node("Expand", {"x", "wider"}, {"z"});
  b.Output("y", {2, 3, 4});
  b.Output("z", {2, 2, 3, 4});
  auto e = LoadModel(b.Save(dir / "expand.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  std::vector<std::string> sources;
  for (const NodeBinding& binding : (*e)->bindings())
    if (binding.op_type == "Expand") sources.push_back(binding.policy_source);
  REQUIRE(sources.size() == 2);
  CHECK(sources[0] == "alias");
  CHECK(sources[1] != "alias");
  const std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 4);
  const auto out = RunOnce(**e, inputs);
  REQUIRE(out.size() == 2);
  for (size_t i = 0; i < 24; ++i) {
    CHECK(out[0].data[i] == std::max(inputs[0].data[i], 0.0f));
    CHECK(out[1].data[i] == inputs[0].data[i]);
    CHECK(out[1].data[24 + i] == inputs[0].data[i]);
  }
}

TEST_CASE("executor: values of shapes known per run share buffers between runs of other sizes, and compute what each run asks") {
  // x [8] -> NonZero [1, k] (int64) -> Cast a [1, k] -> b = a * a -> c = b + a -> y = ReduceSum(c) [1, 1]:
  // four values of a size known per run, whose lives let some take turns in one buffer (of another dtype).
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {8});
  b.Node("NonZero", {"x"}, {"nz"});
  ModelBuilder::IntAttr(b.Node("Cast", {"nz"}, {"a"}), "to", onnx::TensorProto::FLOAT);
  b.Node("Mul", {"a", "a"}, {"b"});
  b.Node("Add", {"b", "a"}, {"c"});
  b.Node("ReduceSum", {"c"}, {"y"});
  b.Output("y", {1, 1});
  auto e = LoadModel(b.Save(dir / "nonzero.onnx"), {}, nullptr, {}, LoadOptions{/*run_only=*/true});
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  // Nonzero positions -> the sum of i * i + i over them.
  const std::vector<std::vector<int>> runs = {{1, 4, 6}, {0, 1, 2, 3, 4, 5, 6, 7}, {}, {7}, {2, 3}};
  for (const auto& positions : runs) {
    CAPTURE(positions.size());
    Tensor x({8});
    float want = 0;
    for (int i : positions) x.data[static_cast<size_t>(i)] = 1.5f, want += static_cast<float>(i * i + i);
    const auto got = RunOnce(**e, {x});
    REQUIRE(got.size() == 1);
    REQUIRE(got[0].data.size() == 1);
    CHECK(got[0].data[0] == want);
  }
}

}  // namespace
}  // namespace tilebank::engine::model
