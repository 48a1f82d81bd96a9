// Values handed between two convolutions that both compute in bf16 go over in bf16 ("narrow",
// engine/runtime/layout_plan.h): the producer writes bf16, the reader takes it as it is. The model
// computes what it computes in float32 within bf16's tolerance; a float32 neighbour keeps a value
// float32. Only where oneDNN has native bf16 kernels (AVX512_BF16 or AMX); elsewhere nothing to check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "engine/backends/library_impls.h"
#include "engine/backends/op_template.h"
#include "engine/core/precision_mode.h"
#include "engine/ir/node_op_spec.h"
#include "engine/ir/onnx_import.h"
#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::TempDir;

// impl.onednn's policy in bf16 for each Conv whose weights' second dimension (64: the first, 1: the
// depthwise one, 96: the last) is in `channels`.
PolicyLookup Bf16Where(const std::vector<int64_t>& channels) {
  return [channels](const OpSpec& op) -> std::optional<FoundPolicy> {
    if (op.op_type != "Conv" || std::find(channels.begin(), channels.end(), op.inputs[1].shape[1]) == channels.end()) return std::nullopt;
    Entry e;
    e.kind = EntryKind::kOp;
    e.op_type = op.op_type;
    e.descriptor = op.canonical.text;
    e.template_id = OneDnnImpl().id();
    e.policy = MakePolicy({{"algo", std::string("direct")}, {"impl", std::string("default")}, {"layout", std::string("auto")},
                           {kPrecisionKnob, std::string("bf16")}});
    return FoundPolicy{e, false};
  };
}

// The layout name each value is handed over in, by the name of the node writing it.
std::string LayoutOf(const Executor& e, const std::string& node) {
  for (const NodeBinding& b : e.bindings()) {
    if (b.name == node) return b.layout;
    for (const std::string& fused : b.fused_nodes)
      if (fused == node) return b.layout;
  }
  return "(no such step)";
}

// The largest absolute difference of `got` from `want`, and the largest magnitude in `want`.
std::pair<double, double> WorstError(const Tensor& want, const Tensor& got) {
  double worst = 0, scale = 0;
  for (float v : want.data) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (size_t i = 0; i < got.data.size() && i < want.data.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(got.data[i]) - want.data[i]));
  return {worst, scale};
}

// The model at `path` imported and run in float32 on random inputs (`seed`): what a bf16 binding is
// compared with. Null where this CPU has no native bf16 for its first convolution: nothing to check.
struct Float32Run {
  Graph graph;
  std::vector<Tensor> inputs, want;
  std::vector<const Tensor*> in() const { return {&inputs[0]}; }
};
std::unique_ptr<Float32Run> RunInFloat32(const std::string& path, uint64_t seed) {
  auto graph = ImportModel(path, {});
  REQUIRE_MESSAGE(graph.ok(), graph.status().message());
  auto conv = NodeOpSpec(*graph, graph->nodes[0]);
  REQUIRE(conv.ok());
  if (OneDnnImpl().Space(conv->op).IndexOf(kPrecisionKnob) < 0) return nullptr;
  auto run = std::make_unique<Float32Run>();
  run->graph = std::move(graph.value());
  auto exact = Executor::Load(run->graph, nullptr, BankFusionLookup(nullptr));
  REQUIRE_MESSAGE(exact.ok(), exact.status().message());
  run->inputs = RandomInputs(run->graph, seed);
  REQUIRE((*exact)->Run(run->in(), &run->want).ok());
  return run;
}

TEST_CASE("narrow handover: two bf16 convolutions hand their value over in bf16, a float32 neighbour keeps it float32") {
  TempDir dir;
  const auto reference = RunInFloat32(testing::SaveInvertedResidual(dir / "block.onnx"), 5);
  if (!reference) return;  // no native bf16 on this CPU
  const Graph* graph = &reference->graph;
  const std::vector<const Tensor*> in = reference->in();
  const std::vector<Tensor>& want = reference->want;

  SUBCASE("all three in bf16: both values between them narrow") {
    auto lowered = Executor::Load(*graph, Bf16Where({64, 1, 96}), BankFusionLookup(nullptr));
    REQUIRE_MESSAGE(lowered.ok(), lowered.status().message());
    CHECK((*lowered)->LowerPrecisionSteps() == 3);
    const std::string first = LayoutOf(**lowered, "Conv_c0"), second = LayoutOf(**lowered, "Conv_c1");
    CHECK_MESSAGE(first.find("bf16") != std::string::npos, first);
    CHECK_MESSAGE(second.find("bf16") != std::string::npos, second);
    std::vector<Tensor> got;
    REQUIRE((*lowered)->Run(in, &got).ok());
    REQUIRE(got.size() == 1);
    const auto [worst, scale] = WorstError(want[0], got[0]);
    CHECK(worst > 0);
    CHECK(worst <= kBf16Tolerance * scale);
  }
  SUBCASE("the depthwise convolution in float32: nothing narrow") {
    auto mixed = Executor::Load(*graph, Bf16Where({64, 96}), BankFusionLookup(nullptr));
    REQUIRE_MESSAGE(mixed.ok(), mixed.status().message());
    CHECK((*mixed)->LowerPrecisionSteps() == 2);
    for (const char* node : {"Conv_c0", "Conv_c1"}) {
      const std::string layout = LayoutOf(**mixed, node);
      CHECK_MESSAGE(layout.find("bf16") == std::string::npos, layout);
    }
    std::vector<Tensor> got;
    REQUIRE((*mixed)->Run(in, &got).ok());
    const auto [worst, scale] = WorstError(want[0], got[0]);
    CHECK(worst <= kBf16Tolerance * scale);
  }
}

TEST_CASE("narrow handover: a squeeze-excitation between two bf16 convolutions reads and writes bf16") {
  TempDir dir;
  const auto reference = RunInFloat32(testing::SaveSqueezeExcitation(dir / "se.onnx"), 7);
  if (!reference) return;  // no native bf16 on this CPU
  const Graph* graph = &reference->graph;
  const std::vector<const Tensor*> in = reference->in();
  const std::vector<Tensor>& want = reference->want;

  auto lowered = Executor::Load(*graph, Bf16Where({32, 96}), BankFusionLookup(nullptr));
  REQUIRE_MESSAGE(lowered.ok(), lowered.status().message());
  CHECK((*lowered)->LowerPrecisionSteps() == 2);
  // The first convolution's step (Swish fused) writes e0, the scale m: both bf16.
  int e0 = -1, m = -1;
  for (size_t v = 0; v < graph->values.size(); ++v) {
    if (graph->values[v].name == "e0") e0 = static_cast<int>(v);
    if (graph->values[v].name == "m") m = static_cast<int>(v);
  }
  REQUIRE(e0 >= 0);
  REQUIRE(m >= 0);
  CHECK_MESSAGE((*lowered)->LayoutOf(e0).narrow, (*lowered)->LayoutOf(e0).name);
  CHECK_MESSAGE((*lowered)->LayoutOf(m).narrow, (*lowered)->LayoutOf(m).name);
  std::vector<Tensor> got;
  REQUIRE((*lowered)->Run(in, &got).ok());
  REQUIRE(got.size() == 1);
  const auto [worst, scale] = WorstError(want[0], got[0]);
  CHECK(worst > 0);
  CHECK(worst <= kBf16Tolerance * scale);

  // The float32 model, bound the same way but for the precision, hands nothing over narrow.
  auto exact = Executor::Load(*graph, nullptr, BankFusionLookup(nullptr));
  REQUIRE(exact.ok());
  CHECK(!(*exact)->LayoutOf(e0).narrow);
  CHECK(!(*exact)->LayoutOf(m).narrow);
}

}  // namespace
}  // namespace tilebank::engine::model
