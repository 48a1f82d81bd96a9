#include <doctest/doctest.h>

#include <algorithm>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/runtime/layout_plan.h"

namespace tilebank::engine::model {
namespace {

const HandoverLayout kBlocked{"nChw16c:1x32x8x8", "nChw16c", 2048};

// v0 -> Conv -> v1 -> Conv -> v2 -> Conv -> v3: v0 the model's input, v3 its output.
Graph Chain() {
  Graph g;
  for (int i = 0; i < 4; ++i) {
    Value v;
    v.name = "v" + std::to_string(i);
    v.shape = {1, 32, 8, 8};
    v.dtype = "float32";
    v.shape_known = true;
    g.values.push_back(v);
  }
  for (int i = 0; i < 3; ++i) {
    Node n;
    n.name = "conv" + std::to_string(i);
    n.op_type = "Conv";
    n.inputs = {i};
    n.outputs = {i + 1};
    g.nodes.push_back(n);
  }
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

// Appends a float32 value of `shape` to `g`.
void AddValue(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  Value v;
  v.name = name;
  v.shape = std::move(shape);
  g.values.push_back(v);
}

// Appends a node `op` reading `inputs` and writing `output` to `g`.
Node& AddNode(Graph& g, const std::string& op, std::vector<int> inputs, int output) {
  Node n;
  n.name = op + std::to_string(g.nodes.size());
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  g.nodes.push_back(n);
  return g.nodes.back();
}

// Each convolution writes and reads the blocked layout natively, unless `row_major_reader` says
// which step reads its input row-major only.
std::vector<LayoutStep> Steps(int row_major_reader = -1) {
  std::vector<LayoutStep> steps(3);
  for (int i = 0; i < 3; ++i) {
    steps[i].kind = LayoutStep::Kind::kLayoutKernel;
    steps[i].node = i;
    steps[i].inputs = {i};
    steps[i].output = i + 1;
    steps[i].native_output = kBlocked;
    steps[i].native_inputs = {i == row_major_reader ? HandoverLayout{} : kBlocked};
  }
  return steps;
}

// One layout-kernel step per node of `g`, reading and writing what the node does (native layouts: none).
std::vector<LayoutStep> StepPerNode(const Graph& g) {
  std::vector<LayoutStep> steps(g.nodes.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].kind = LayoutStep::Kind::kLayoutKernel;
    steps[i].node = static_cast<int>(i);
    steps[i].inputs = g.nodes[i].inputs;
    steps[i].output = g.nodes[i].outputs[0];
  }
  return steps;
}

TEST_CASE("layout plan: values between kernels that write and read one native layout are handed over in it, the model's inputs and outputs stay row-major") {
  const LayoutPlan plan = PlanLayouts(Chain(), Steps(), true);
  CHECK(plan.layout_of[0].row_major());
  CHECK(plan.layout_of[1].key == kBlocked.key);
  CHECK(plan.layout_of[2].key == kBlocked.key);
  CHECK(plan.layout_of[3].row_major());
  for (const auto& kernel : plan.family_kernels) CHECK(!kernel);
}

TEST_CASE("layout plan: a value a reader takes row-major only stays row-major, and turned off, every value is") {
  const LayoutPlan plan = PlanLayouts(Chain(), Steps(2), true);
  CHECK(plan.layout_of[1].key == kBlocked.key);
  CHECK(plan.layout_of[2].row_major());
  const LayoutPlan off = PlanLayouts(Chain(), Steps(), false);
  for (const auto& layout : off.layout_of) CHECK(layout.row_major());
}

TEST_CASE("layout plan: a value goes narrow (bf16) only where its writer and every reader take it so in its native layout") {
  const HandoverLayout narrow{kBlocked.key + ":dt2", "nChw16c bf16", 1024};
  // Every step computes in bf16: both values between them go narrow, the model's ends stay row-major.
  std::vector<LayoutStep> steps = Steps();
  for (LayoutStep& s : steps) s.narrow_output = narrow, s.narrow_inputs = {narrow};
  LayoutPlan plan = PlanLayouts(Chain(), steps, true);
  CHECK(plan.layout_of[0].row_major());
  CHECK(plan.layout_of[1].key == narrow.key);
  CHECK(plan.layout_of[2].key == narrow.key);
  CHECK(plan.layout_of[3].row_major());
  // The last step reads float32 only: v2 goes over in the float32 layout, v1 stays narrow.
  steps[2].narrow_inputs = {HandoverLayout{}};
  plan = PlanLayouts(Chain(), steps, true);
  CHECK(plan.layout_of[1].key == narrow.key);
  CHECK(plan.layout_of[2].key == kBlocked.key);
  // A writer that writes float32 only keeps its value float32; a value handed over row-major is
  // never narrow.
  steps = Steps(2);
  for (LayoutStep& s : steps) s.narrow_output = narrow, s.narrow_inputs = {narrow};
  steps[0].narrow_output = {};
  plan = PlanLayouts(Chain(), steps, true);
  CHECK(plan.layout_of[1].key == kBlocked.key);
  CHECK(plan.layout_of[2].row_major());
}

// v0 -> Conv -> v1 -> Mul(v1, s) -> v2 -> Conv -> v3, s = v4 a per-channel scale [1, 32, 1, 1]
// (the model's second input): a squeeze-excitation's scale between two convolutions.
Graph ScaledChain() {
  Graph g = Chain();
  g.nodes.resize(2);
  g.nodes[1].name = "scale";
  g.nodes[1].op_type = "Mul";
  g.nodes[1].inputs = {1, 4};
  g.nodes[1].outputs = {2};
  Node last;
  last.name = "conv1";
  last.op_type = "Conv";
  last.inputs = {2};
  last.outputs = {3};
  g.nodes.push_back(last);
  Value scale = g.values[0];
  scale.name = "s";
  scale.shape = {1, 32, 1, 1};
  g.values.push_back(scale);
  g.inputs = {0, 4};
  return g;
}

TEST_CASE("layout plan: a per-channel scale in its family passes a bf16 value on between two steps that take it so") {
  const Graph g = ScaledChain();
  const HandoverLayout nhwc = LayoutInFamily("nhwc", {1, 32, 8, 8});
  const auto md = DescOfHandover(nhwc, {1, 32, 8, 8});
  REQUIRE(md);
  const HandoverLayout narrow = HandoverLayoutOf(WithBf16(*md));
  REQUIRE(narrow.narrow);
  std::vector<LayoutStep> steps = StepPerNode(g);
  for (int i : {0, 2}) {
    steps[i].native_output = nhwc, steps[i].native_inputs = {nhwc};
    steps[i].narrow_output = narrow, steps[i].narrow_inputs = {narrow};
  }
  LayoutPlan plan = PlanLayouts(g, steps, true);
  REQUIRE(plan.family_kernels[1]);  // the scale runs in the group's family, on its own loop
  CHECK(plan.layout_of[1].key == narrow.key);
  CHECK(plan.layout_of[2].key == narrow.key);
  CHECK(plan.layout_of[4].row_major());
  // The last convolution reads float32 only: the scale reads bf16 and writes float32.
  steps[2].narrow_inputs = {HandoverLayout{}};
  plan = PlanLayouts(g, steps, true);
  CHECK(plan.layout_of[1].key == narrow.key);
  CHECK(plan.layout_of[2].key == nhwc.key);
  // A second scale after the first (v2 -> Mul(v2, s) -> v5 -> Conv): the value between the two
  // scales, which both could read and write bf16, stays float32, no step computing in bf16 touching it.
  Graph twice = g;
  Node second = twice.nodes[1];
  second.name = "scale2";
  second.inputs = {2, 4};
  second.outputs = {5};
  twice.nodes[2].inputs = {5};
  twice.nodes.insert(twice.nodes.begin() + 2, second);
  Value v5 = twice.values[2];
  v5.name = "v5";
  twice.values.push_back(v5);
  std::vector<LayoutStep> four(steps.begin(), steps.begin() + 2);
  LayoutStep scale2 = steps[1];
  scale2.node = 2, scale2.inputs = {2, 4}, scale2.output = 5;
  four.push_back(scale2);
  four.push_back(steps[2]);
  four[3].node = 3, four[3].inputs = {5};
  four[3].narrow_inputs = {narrow};
  plan = PlanLayouts(twice, four, true);
  CHECK(plan.layout_of[1].key == narrow.key);
  CHECK(plan.layout_of[2].key == nhwc.key);
  CHECK(plan.layout_of[5].key == narrow.key);
}

// v0 (the model's input) -> Conv -> v1; v0 -> a step with no native layout (a frame Gather) -> v2;
// Concat(v2, v1) -> v3 -> Conv -> v4 (the model's output). Every value [1, 16, 8, 8] but v3 and v4
// ([1, 32, 8, 8]).
Graph ConcatOfRowMajorInput() {
  Graph g;
  for (const char* name : {"v0", "v1", "v2"}) AddValue(g, name, {1, 16, 8, 8});
  AddValue(g, "v3", {1, 32, 8, 8});
  AddValue(g, "v4", {1, 32, 8, 8});
  AddNode(g, "Conv", {0}, 1);
  AddNode(g, "Gather", {0}, 2);
  AddNode(g, "Concat", {2, 1}, 3).attrs["axis"] = 1;
  AddNode(g, "Conv", {3}, 4);
  g.inputs = {0};
  g.outputs = {4};
  return g;
}

TEST_CASE("layout plan: a Concat reads an input nothing writes natively row-major, and its group keeps the native layout") {
  const Graph g = ConcatOfRowMajorInput();
  const HandoverLayout blocked16 = LayoutInFamily("nChw16c", {1, 16, 8, 8}), blocked32 = LayoutInFamily("nChw16c", {1, 32, 8, 8});
  REQUIRE(!blocked16.row_major());
  std::vector<LayoutStep> steps = StepPerNode(g);
  steps[0].native_output = blocked16, steps[0].native_inputs = {blocked16};
  steps[1].kind = LayoutStep::Kind::kOther;  // the Gather: row-major only
  steps[3].native_output = blocked32, steps[3].native_inputs = {blocked32};
  const LayoutPlan plan = PlanLayouts(g, steps, true);
  CHECK(plan.layout_of[1].key == blocked16.key);
  CHECK(plan.layout_of[2].row_major());
  CHECK(plan.layout_of[3].key == blocked32.key);
  CHECK(plan.layout_of[4].row_major());
  REQUIRE(plan.family_kernels[2]);
  // The Concat's kernel: v2 row-major into the first block, v1 as it is into the second.
  std::vector<float> v2(16 * 64), v1(16 * 64), v3(32 * 64, -1.f);
  for (size_t i = 0; i < v2.size(); ++i) v2[i] = static_cast<float>(i), v1[i] = 10000.f + static_cast<float>(i);
  REQUIRE(plan.family_kernels[2]->RunDirect({v2.data(), v1.data()}, v3.data()).ok());
  int wrong = 0;
  for (int c = 0; c < 16; ++c)
    for (int hw = 0; hw < 64; ++hw) {
      wrong += v3[hw * 16 + c] != v2[c * 64 + hw];                // block 0: channels 0-15 from row-major v2
      wrong += v3[(64 + hw) * 16 + c] != v1[hw * 16 + c];         // block 1: v1, nChw16c already
    }
  CHECK(wrong == 0);
  // The same Concat with its row-major input a step that writes natively: all of it in the family.
  std::vector<LayoutStep> native = steps;
  native[1].kind = LayoutStep::Kind::kLayoutKernel;
  native[1].native_output = blocked16, native[1].native_inputs = {blocked16};
  CHECK(PlanLayouts(g, native, true).layout_of[2].key == blocked16.key);
}

TEST_CASE("layout plan: an elementwise step with a constant of one value throughout (a zero initial state) computes the same in any layout") {
  // v0 -> Conv -> v1 -> Mul(v1, zeros) -> v2 -> Conv -> v3, zeros a [1, 32, 8, 8] constant.
  Graph g = Chain();
  g.nodes[1].op_type = "Mul";
  Value zeros = g.values[1];
  zeros.name = "zeros";
  zeros.constant = ConstTensor::Floats({1, 32, 8, 8}, std::vector<float>(32 * 64, 0.f));
  g.values.push_back(zeros);
  g.nodes[1].inputs = {1, 4};
  std::vector<LayoutStep> steps = Steps();
  steps[1].kind = LayoutStep::Kind::kOther;
  steps[1].pointwise = true;
  steps[1].inputs = {1, 4};
  steps[1].native_output = {}, steps[1].native_inputs = {};
  LayoutPlan plan = PlanLayouts(g, steps, true);
  CHECK(plan.agnostic[1]);
  CHECK(plan.layout_of[1].key == kBlocked.key);
  CHECK(plan.layout_of[2].key == kBlocked.key);
  // One value differing: the constant reads differently in another layout.
  g.values[4].constant->floats[5] = 1.f;
  plan = PlanLayouts(g, steps, true);
  CHECK_FALSE(plan.agnostic[1]);
  CHECK(plan.layout_of[1].row_major());
  // One value throughout but broadcast ([1, 32, 1, 1]): not taken (small_unet's outputs went wrong).
  g.values[4].shape = {1, 32, 1, 1};
  g.values[4].constant = ConstTensor::Floats({1, 32, 1, 1}, std::vector<float>(32, 0.f));
  CHECK_FALSE(PlanLayouts(g, steps, true).agnostic[1]);
}

// v0 -> Conv -> v1 [1, 16, 8, 8]; v1 -> Conv -> v2 [1, 1, 8, 8] (an attention gate's map); Mul(v2, v1)
// -> v3; Resize(v3, no roi, scales) -> v4 [1, 16, 16, 16] (bilinear, align_corners); Conv(v4) -> v5.
Graph AttentionGate() {
  Graph g;
  AddValue(g, "v0", {1, 16, 8, 8});
  AddValue(g, "v1", {1, 16, 8, 8});
  AddValue(g, "v2", {1, 1, 8, 8});
  AddValue(g, "v3", {1, 16, 8, 8});
  AddValue(g, "v4", {1, 16, 16, 16});
  AddValue(g, "v5", {1, 16, 16, 16});
  AddValue(g, "scales", {4});
  g.values.back().constant = ConstTensor::Floats({4}, {1.f, 1.f, 2.f, 2.f});
  AddNode(g, "Conv", {0}, 1);
  AddNode(g, "Conv", {1}, 2);
  AddNode(g, "Mul", {2, 1}, 3);
  Node& resize = AddNode(g, "Resize", {3, -1, 6}, 4);
  resize.attrs["mode"] = "linear";
  resize.attrs["coordinate_transformation_mode"] = "align_corners";
  AddNode(g, "Conv", {4}, 5);
  g.inputs = {0};
  g.outputs = {5};
  return g;
}

TEST_CASE("layout plan: an attention gate's Mul by a one-channel map and a bilinear Resize run in the family, the map row-major") {
  Graph g = AttentionGate();
  const HandoverLayout nhwc8 = LayoutInFamily("nhwc", {1, 16, 8, 8}), nhwc16 = LayoutInFamily("nhwc", {1, 16, 16, 16});
  REQUIRE(!nhwc8.row_major());
  std::vector<LayoutStep> steps = StepPerNode(g);
  steps[0].native_output = nhwc8, steps[0].native_inputs = {nhwc8};
  steps[1].native_inputs = {nhwc8};  // the gate's map: written row-major
  steps[4].native_output = nhwc16, steps[4].native_inputs = {nhwc16};
  const LayoutPlan plan = PlanLayouts(g, steps, true);
  CHECK(plan.layout_of[1].key == nhwc8.key);
  CHECK(plan.layout_of[2].row_major());
  CHECK(plan.layout_of[3].key == nhwc8.key);
  CHECK(plan.layout_of[4].key == nhwc16.key);
  REQUIRE(plan.family_kernels[2]);
  REQUIRE(plan.family_kernels[3]);
  CHECK(plan.family_inputs[2] == std::vector<int>{1, 2});  // the tensor in the family first, then the map
  // The Mul: each position's 16 channels (NHWC) by that position's value of the row-major map.
  std::vector<float> x(16 * 64), map(64), y(16 * 64, -1.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (size_t i = 0; i < map.size(); ++i) map[i] = 0.5f * static_cast<float>(i);
  REQUIRE(plan.family_kernels[2]->RunDirect({x.data(), map.data()}, y.data()).ok());
  int wrong = 0;
  for (int p = 0; p < 64; ++p)
    for (int c = 0; c < 16; ++c) wrong += y[p * 16 + c] != x[p * 16 + c] * map[p];
  CHECK(wrong == 0);
  // The Resize's output of one position (a global pool in disguise): no family op, so its group
  // (here the gate's output) goes as its other readers allow: row-major, read by a row-major Resize.
  g.values[4].shape = g.values[5].shape = {1, 16, 1, 1};
  g.values[6].constant = ConstTensor::Floats({4}, {1.f, 1.f, 0.125f, 0.125f});
  steps[4].native_output = steps[4].native_inputs[0] = HandoverLayout{};
  const LayoutPlan pooled = PlanLayouts(g, steps, true);
  CHECK_FALSE(pooled.family_kernels[3]);
  CHECK(pooled.layout_of[3].row_major());
}

TEST_CASE("layout plan: a spatial attention's max over channels reads the family and writes its one channel row-major") {
  // v0 -> Conv -> v1 [1, 16, 8, 8]; ReduceMax(v1, axes [1]) -> v2 [1, 1, 8, 8]; Conv(v2) -> v3 (the map);
  // Mul(v1, v3) -> v4; Conv(v4) -> v5.
  Graph g;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 16, 8, 8}, {1, 16, 8, 8}, {1, 1, 8, 8}, {1, 1, 8, 8}, {1, 16, 8, 8}, {1, 16, 8, 8}})
    AddValue(g, "v" + std::to_string(g.values.size()), shape);
  AddNode(g, "Conv", {0}, 1);
  AddNode(g, "ReduceMax", {1}, 2).attrs["axes"] = std::vector<int64_t>{1};
  AddNode(g, "Conv", {2}, 3);
  AddNode(g, "Mul", {1, 3}, 4);
  AddNode(g, "Conv", {4}, 5);
  g.inputs = {0};
  g.outputs = {5};
  const HandoverLayout nhwc = LayoutInFamily("nhwc", {1, 16, 8, 8});
  std::vector<LayoutStep> steps = StepPerNode(g);
  steps[0].native_output = nhwc, steps[0].native_inputs = {nhwc};
  steps[4].native_output = nhwc, steps[4].native_inputs = {nhwc};
  const LayoutPlan plan = PlanLayouts(g, steps, true);
  CHECK(plan.layout_of[1].key == nhwc.key);
  CHECK(plan.layout_of[2].row_major());
  CHECK(plan.layout_of[3].row_major());
  CHECK(plan.layout_of[4].key == nhwc.key);
  REQUIRE(plan.family_kernels[1]);
  REQUIRE(plan.family_kernels[3]);
  // The reduction: each position's 16 channels (NHWC) to its largest, one row-major value a position.
  std::vector<float> x(16 * 64), y(64, -1.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101);
  REQUIRE(plan.family_kernels[1]->RunDirect({x.data()}, y.data()).ok());
  int wrong = 0;
  for (int p = 0; p < 64; ++p) wrong += y[p] != *std::max_element(x.begin() + p * 16, x.begin() + p * 16 + 16);
  CHECK(wrong == 0);
}

TEST_CASE("layout plan: a MaxPool whose window is the whole map runs as the family's global max pool") {
  // v0 -> Conv -> v1 [1, 16, 8, 8] -> MaxPool (kernel 8x8) -> v2 [1, 16, 1, 1]; v1 -> Conv -> v3.
  Graph g;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 16, 8, 8}, {1, 16, 8, 8}, {1, 16, 1, 1}, {1, 16, 8, 8}})
    AddValue(g, "v" + std::to_string(g.values.size()), shape);
  AddNode(g, "Conv", {0}, 1);
  AddNode(g, "MaxPool", {1}, 2).attrs["kernel_shape"] = std::vector<int64_t>{8, 8};
  AddNode(g, "Conv", {1}, 3);
  g.inputs = {0};
  g.outputs = {2, 3};
  const HandoverLayout nhwc = LayoutInFamily("nhwc", {1, 16, 8, 8});
  std::vector<LayoutStep> steps = StepPerNode(g);
  steps[0].native_output = nhwc, steps[0].native_inputs = {nhwc};
  steps[2].native_output = nhwc, steps[2].native_inputs = {nhwc};
  const LayoutPlan plan = PlanLayouts(g, steps, true);
  CHECK(plan.layout_of[1].key == nhwc.key);
  REQUIRE(plan.family_kernels[1]);
  std::vector<float> x(16 * 64), y(16, -1.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) - 50.f;
  REQUIRE(plan.family_kernels[1]->RunDirect({x.data()}, y.data()).ok());
  int wrong = 0;
  for (int c = 0; c < 16; ++c) {
    float want = x[static_cast<size_t>(c)];
    for (int p = 0; p < 64; ++p) want = std::max(want, x[static_cast<size_t>(p * 16 + c)]);
    wrong += y[static_cast<size_t>(c)] != want;
  }
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace tilebank::engine::model
