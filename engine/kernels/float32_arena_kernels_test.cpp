// The float32 arena kernels (float32_arena_kernels.cpp) checked against ONNX's backend node tests whose
// size operands are runtime inputs there: here they become initializers (as in exported models), so
// the output shape is known at load and the arena kernel runs through `tilebank run --data`.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <filesystem>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <utility>

#include "engine/kernels/kernel_registry.h"
#include "engine/runtime/model_session.h"
#include "tests/test_support.h"
#include "tests/onnx_node_case.h"

namespace tilebank::engine::model {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::TempDir;

// Runs node test `dir` with every input after the first made an initializer; the CLI's result.
testing::CommandResult RunWithConstantOperands(const fs::path& dir, const TempDir& scratch, const std::string& flags = "") {
  onnx::ModelProto model;
  REQUIRE(testing::ReadProtoFile(dir / "model.onnx", &model));
  auto* g = model.mutable_graph();
  for (int i = 1; i < g->input_size(); ++i) {
    onnx::TensorProto t;
    REQUIRE(testing::ReadProtoFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), &t));
    t.set_name(g->input(i).name());
    *g->add_initializer() = t;
  }
  const std::string name = dir.filename().string();
  const fs::path data = fs::path(scratch.path()) / name;
  fs::create_directories(data);
  fs::copy_file(dir / "test_data_set_0/input_0.pb", data / "input_0.pb");
  fs::copy_file(dir / "test_data_set_0/output_0.pb", data / "output_0.pb");
  std::ofstream(data / "model.onnx", std::ios::binary) << model.SerializeAsString();
  return RunCli("run -m " + (data / "model.onnx").string() + " --data " + data.string() + " --repeat 1 --warmup 0 --bank " + (scratch / "none") + flags);
}

TEST_CASE("Resize matches ONNX's node tests in every mode with roi, scales and sizes as constants") {
  TempDir scratch;
  int matched = 0;
  for (const auto& e : fs::directory_iterator("/usr/share/libonnx-testdata/data/node")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_resize_", 0) != 0) continue;
    CAPTURE(name);
    auto r = RunWithConstantOperands(e.path(), scratch);
    CHECK_MESSAGE(r.exit_code == 0, r.err << r.out);
    matched += r.exit_code == 0;
  }
  CHECK(matched >= 22);  // nearest (four roundings), linear, cubic, tf_crop_and_resize, exclude_outside
}

TEST_CASE("Resize's cubic node tests run on the arena and match: scales and sizes, up and down, A -0.5 with exclude_outside, align_corners, asymmetric") {
  TempDir scratch;
  int cubic = 0;
  for (const auto& e : fs::directory_iterator("/usr/share/libonnx-testdata/data/node")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_resize_", 0) != 0 || name.find("cubic") == std::string::npos) continue;
    CAPTURE(name);
    auto r = RunWithConstantOperands(e.path(), scratch, " --json --profile");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err << r.out);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(report["check"]["ok"] == true);
    for (const auto& step : report["profile"])
      if (step["op_type"] == "Resize") CHECK(step["source"] == "float32");
    ++cubic;
  }
  CHECK(cubic >= 9);
}

// The op's arena kernel ("float32") and its reference kernel run on `inputs`: their outputs.
std::pair<TypedTensor, TypedTensor> ArenaAndReferenceOutputs(const kernels::KernelInfo& info, const kernels::KernelInputs& inputs) {
  auto arena = kernels::KernelRegistry::Default().Create(info, "float32");
  auto reference = kernels::KernelRegistry::Default().Create(info, "reference");
  REQUIRE_MESSAGE(arena.ok(), arena.status().message());
  REQUIRE(reference.ok());
  REQUIRE((*arena)->Arena() != nullptr);
  std::vector<TypedTensor> fast(1), slow(1);
  REQUIRE((*arena)->Compute(inputs, &fast).ok());
  REQUIRE((*reference)->Compute(inputs, &slow).ok());
  return {std::move(fast[0]), std::move(slow[0])};
}

// The same, bit for bit.
void CheckArenaAgainstReference(const kernels::KernelInfo& info, const kernels::KernelInputs& inputs) {
  const auto outputs = ArenaAndReferenceOutputs(info, inputs);
  CHECK(outputs.first.shape == outputs.second.shape);
  CHECK(outputs.first.bytes == outputs.second.bytes);
}

// Where's arena kernel (a bool condition read as its bytes) against the reference, over the
// broadcasts an attention mask makes: a mask shared by the heads, a scalar fill, a column
// condition (stride 0 along the row), ragged rows.
TEST_CASE("Where in the arena selects as the reference does under every broadcast of its three operands") {
  struct Shapes {
    std::vector<int64_t> c, x, z, out;
  };
  const std::vector<Shapes> cases = {{{1, 5, 37}, {4, 5, 37}, {}, {4, 5, 37}},   {{4, 5, 37}, {}, {4, 5, 37}, {4, 5, 37}},
                                     {{3, 1}, {3, 19}, {1, 19}, {3, 19}},        {{2, 3, 1}, {2, 3, 40}, {1}, {2, 3, 40}},
                                     {{17}, {17}, {17}, {17}},                   {{}, {2, 33}, {2, 33}, {2, 33}}};
  for (const Shapes& sh : cases) {
    CAPTURE(sh.out.size());
    CAPTURE(sh.out.back());
    TypedTensor c(DType::kBool, sh.c), x(DType::kFloat32, sh.x), z(DType::kFloat32, sh.z);
    for (int64_t i = 0; i < c.size(); ++i) c.data<bool>()[i] = (i * 7919) % 3 == 0;
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.5f;
    for (int64_t i = 0; i < z.size(); ++i) z.data<float>()[i] = -static_cast<float>(i) - 0.25f;
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Where";
    info.num_outputs = 1;
    info.input_types = {DType::kBool, DType::kFloat32, DType::kFloat32};
    info.input_shapes = {sh.c, sh.x, sh.z};
    info.output_shapes = {sh.out};
    CheckArenaAgainstReference(info, {&c, &x, &z});
  }
}

TEST_CASE("Pad in the arena matches ONNX's node tests and the reference in every mode: pads wider than the input, cuts, axes") {
  TempDir scratch;
  for (const char* name : {"test_constant_pad", "test_reflect_pad", "test_edge_pad"}) {
    CAPTURE(name);
    auto r = RunWithConstantOperands(fs::path("/usr/share/libonnx-testdata/data/node") / name, scratch);
    CHECK_MESSAGE(r.exit_code == 0, r.err << r.out);
  }
  struct Case {
    std::string mode;
    std::vector<int64_t> shape, pads, axes;
  };
  // Reflect and edge beyond the input's extent, negative pads (a cut), a pad on the last axis only,
  // rows wholly of the fill (constant on an outer axis), one-element dimensions.
  const std::vector<Case> cases = {{"reflect", {1, 3, 5, 6}, {0, 0, 2, 3, 0, 0, 1, 4}, {}},  {"reflect", {2, 4, 3}, {0, 5, 4, 0, 6, 7}, {}},
                                   {"edge", {1, 3, 5, 6}, {0, 0, 4, 9, 0, 0, 3, 1}, {}},     {"constant", {2, 3, 4}, {1, 2, 0, 1, 0, 3}, {}},
                                   {"constant", {2, 5, 7}, {0, -1, 2, 0, -2, -3}, {}},       {"reflect", {1, 8, 1, 5}, {2, 2, 0, 3}, {2, 3}},
                                   {"edge", {3, 1, 4}, {2, 1, 0, 5, 3, 2}, {}},              {"reflect", {64, 130}, {0, 4, 0, 4}, {}}};
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.shape.size());
    TypedTensor x(DType::kFloat32, c.shape), pads(DType::kInt64, {static_cast<int64_t>(c.pads.size())}), value(DType::kFloat32, {});
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.5f;
    for (size_t i = 0; i < c.pads.size(); ++i) pads.data<int64_t>()[i] = c.pads[i];
    value.data<float>()[0] = -7.f;
    TypedTensor axes(DType::kInt64, {static_cast<int64_t>(c.axes.size())});
    for (size_t i = 0; i < c.axes.size(); ++i) axes.data<int64_t>()[i] = c.axes[i];
    std::vector<int64_t> out = c.shape;
    const std::vector<int64_t> axis_list = c.axes.empty() ? [&] {
      std::vector<int64_t> all;
      for (size_t d = 0; d < c.shape.size(); ++d) all.push_back(static_cast<int64_t>(d));
      return all;
    }()
                                                          : c.axes;
    for (size_t k = 0; k < axis_list.size(); ++k) out[axis_list[k]] += c.pads[k] + c.pads[k + axis_list.size()];
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Pad";
    info.opset = 18;
    info.num_outputs = 1;
    info.attrs = kernels::Attrs(nlohmann::json{{"mode", c.mode}});
    info.input_types = {DType::kFloat32, DType::kInt64, DType::kFloat32};
    info.input_shapes = {c.shape, pads.shape, value.shape};
    info.constant_inputs = {nullptr, std::make_shared<TypedTensor>(pads), std::make_shared<TypedTensor>(value)};
    kernels::KernelInputs inputs = {&x, &pads, &value};
    if (!c.axes.empty()) {
      info.input_types.push_back(DType::kInt64);
      info.input_shapes.push_back(axes.shape);
      info.constant_inputs.push_back(std::make_shared<TypedTensor>(axes));
      inputs.push_back(&axes);
    }
    info.output_shapes = {out};
    CheckArenaAgainstReference(info, inputs);
  }
}

// `op` (Gather or GatherElements) along `axis` with run-time indices: the arena's output against the
// reference's, then `outside` written into the last index, which the arena's run must name.
void CheckIndexedAgainstReference(const char* op, int64_t axis, const TypedTensor& x, TypedTensor* idx, const std::vector<int64_t>& out_shape,
                                  int64_t outside) {
  kernels::KernelInfo info;
  info.op_type = info.node_name = op;
  info.opset = 13;
  info.num_outputs = 1;
  info.attrs = kernels::Attrs(nlohmann::json{{"axis", axis}});
  info.input_types = {DType::kFloat32, idx->dtype};
  info.input_shapes = {x.shape, idx->shape};
  info.output_shapes = {out_shape};
  CheckArenaAgainstReference(info, {&x, idx});
  idx->SetAt(idx->size() - 1, static_cast<double>(outside));
  auto arena = kernels::KernelRegistry::Default().Create(info, "float32");
  REQUIRE(arena.ok());
  std::vector<TypedTensor> out(1);
  const Status refused = (*arena)->Compute({&x, idx}, &out);
  CHECK_MESSAGE(refused.message().find("index " + std::to_string(outside) + " is outside its dimension") != std::string::npos, refused.message());
}

TEST_CASE("GatherElements in the arena gathers as the reference does along every axis, int64 and int32 indices, and names an index out of range") {
  for (const char* name : {"test_gather_elements_0", "test_gather_elements_1", "test_gather_elements_negative_indices"}) {
    TempDir scratch;
    CAPTURE(name);
    auto r = RunWithConstantOperands(fs::path("/usr/share/libonnx-testdata/data/node") / name, scratch);
    CHECK_MESSAGE(r.exit_code == 0, r.err << r.out);
  }
  const std::vector<int64_t> shape = {2, 5, 7, 3};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.5f;
  for (DType index_type : {DType::kInt64, DType::kInt32})
    for (int64_t axis = -1; axis < 4; ++axis) {
      CAPTURE(axis);
      const int64_t a = axis < 0 ? axis + 4 : axis;
      std::vector<int64_t> idx_shape = {2, 4, 6, 3};  // narrower than x but along the axis
      idx_shape[a] = 9;
      TypedTensor idx(index_type, idx_shape);
      for (int64_t i = 0; i < idx.size(); ++i) idx.SetAt(i, static_cast<double>((i * 7919) % (2 * shape[a]) - shape[a]));  // [-dim, dim)
      CheckIndexedAgainstReference("GatherElements", axis, x, &idx, idx_shape, shape[a]);
    }
}

TEST_CASE("Gather in the arena with indices known at run time (token ids) gathers as the reference along every axis, int64 and int32, and names an index out of range") {
  const std::vector<int64_t> shape = {6, 5, 7};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.25f;
  for (DType index_type : {DType::kInt64, DType::kInt32})
    for (int64_t axis = -3; axis < 3; ++axis) {
      CAPTURE(axis);
      const int64_t a = axis < 0 ? axis + 3 : axis;
      const std::vector<int64_t> idx_shape = {4, 3};
      TypedTensor idx(index_type, idx_shape);
      for (int64_t i = 0; i < idx.size(); ++i) idx.SetAt(i, static_cast<double>((i * 7919) % (2 * shape[a]) - shape[a]));  // [-dim, dim)
      std::vector<int64_t> out_shape(shape.begin(), shape.begin() + a);
      out_shape.insert(out_shape.end(), idx_shape.begin(), idx_shape.end());
      out_shape.insert(out_shape.end(), shape.begin() + a + 1, shape.end());
      CheckIndexedAgainstReference("Gather", axis, x, &idx, out_shape, -shape[a] - 1);
    }
}

TEST_CASE("Gather in the arena with constant indices (an unfold's windows: runs of consecutive indices, a repeated and a negative one) gathers as the reference along every axis") {
  const std::vector<int64_t> shape = {5, 10, 12};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.75f;
  for (int64_t axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    const int64_t dim = shape[axis];
    // A run of 4, a run of 2, the last index twice (once negative).
    auto idx = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({2, 4}, {0, 1, 2, 3, 1, 2, dim - 1, -1}));
    std::vector<int64_t> out_shape(shape.begin(), shape.begin() + axis);
    out_shape.insert(out_shape.end(), {2, 4});
    out_shape.insert(out_shape.end(), shape.begin() + axis + 1, shape.end());
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Gather";
    info.opset = 13;
    info.num_outputs = 1;
    info.attrs = kernels::Attrs(nlohmann::json{{"axis", axis}});
    info.input_types = {DType::kFloat32, DType::kInt64};
    info.input_shapes = {shape, idx->shape};
    info.output_shapes = {out_shape};
    info.constant_inputs = {nullptr, idx};
    info.constant_input = {false, true};
    CheckArenaAgainstReference(info, {&x, idx.get()});
  }
}

TEST_CASE("PRelu in the arena computes the reference's bits for every slope broadcast: one value, per channel, along the row, and refuses a slope that does not broadcast") {
  const std::vector<int64_t> shape = {1, 6, 5, 37};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 201 - 100) * 0.37f;
  // {6}: one slope per channel as PRelu-6 defined it (axis 1, not the last).
  for (const std::vector<int64_t>& slope_shape : std::vector<std::vector<int64_t>>{{}, {1}, {6, 1, 1}, {37}, {5, 37}, {1, 6, 5, 37}, {6}}) {
    CAPTURE(slope_shape.size());
    TypedTensor slope(DType::kFloat32, slope_shape);
    for (int64_t i = 0; i < slope.size(); ++i) slope.data<float>()[i] = 0.01f + 0.13f * static_cast<float>(i % 7);
    kernels::KernelInfo info;
    info.op_type = info.node_name = "PRelu";
    info.opset = 16;
    info.num_outputs = 1;
    info.input_types = {DType::kFloat32, DType::kFloat32};
    info.input_shapes = {shape, slope_shape};
    info.output_shapes = {shape};
    CheckArenaAgainstReference(info, {&x, &slope});
  }
  kernels::KernelInfo info;
  info.op_type = info.node_name = "PRelu";
  info.opset = 16;
  info.num_outputs = 1;
  info.input_types = {DType::kFloat32, DType::kFloat32};
  info.input_shapes = {shape, std::vector<int64_t>{5, 36}};
  info.output_shapes = {shape};
  CHECK_FALSE(kernels::KernelRegistry::Default().Create(info, "float32").ok());
}

TEST_CASE("CumSum in the arena computes the reference's bits along every axis, exclusive and reverse") {
  const std::vector<int64_t> shape = {2, 7, 3, 70};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 201 - 100) * 0.0137f;
  for (int64_t axis = -1; axis < 4; ++axis)
    for (int exclusive = 0; exclusive < 2; ++exclusive)
      for (int reverse = 0; reverse < 2; ++reverse) {
        CAPTURE(axis);
        CAPTURE(exclusive);
        CAPTURE(reverse);
        TypedTensor a(DType::kInt64, {});
        a.data<int64_t>()[0] = axis;
        kernels::KernelInfo info;
        info.op_type = info.node_name = "CumSum";
        info.opset = 14;
        info.num_outputs = 1;
        info.attrs = kernels::Attrs(nlohmann::json{{"exclusive", exclusive}, {"reverse", reverse}});
        info.input_types = {DType::kFloat32, DType::kInt64};
        info.input_shapes = {shape, a.shape};
        info.output_shapes = {shape};
        info.constant_inputs = {nullptr, std::make_shared<TypedTensor>(a)};
        CheckArenaAgainstReference(info, {&x, &a});
      }
}

TEST_CASE("LogSoftmax in the arena along every axis (rows for the last, blocks of columns for the others) as the reference computes it, -inf and large values") {
  const std::vector<int64_t> shape = {2, 37, 3, 70};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 201 - 100) * 0.137f;
  x.data<float>()[5] = -INFINITY, x.data<float>()[300] = 80.f;
  for (int64_t axis = -1; axis < 4; ++axis) {
    CAPTURE(axis);
    kernels::KernelInfo info;
    info.op_type = info.node_name = "LogSoftmax";
    info.opset = 13;
    info.num_outputs = 1;
    info.attrs = kernels::Attrs(nlohmann::json{{"axis", axis}});
    info.input_types = {DType::kFloat32};
    info.input_shapes = {shape};
    info.output_shapes = {shape};
    const auto [fast, slow] = ArenaAndReferenceOutputs(info, {&x});
    REQUIRE(fast.shape == slow.shape);
    for (int64_t i = 0; i < fast.size(); ++i) {
      const float got = fast.data<float>()[i], want = slow.data<float>()[i];
      if (std::isinf(want)) CHECK(got == want);
      else CHECK(got == doctest::Approx(want).epsilon(1e-5).scale(1.0));
    }
  }
}

TEST_CASE("ReduceLogSumExp in the arena over each block of axes (rows for the last, columns for the others) as the reference computes it, NaN, -inf and +inf") {
  const std::vector<int64_t> shape = {2, 37, 3, 70};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 201 - 100) * 0.137f;
  x.data<float>()[5] = std::nanf("");                       // a NaN in the first row and column
  for (int64_t i = 70; i < 140; ++i) x.data<float>()[i] = -INFINITY;  // a whole row of -inf
  x.data<float>()[300] = INFINITY;
  const std::vector<std::vector<int64_t>> cases = {{3}, {-1}, {1}, {0}, {1, 2}, {2, 3}, {}};
  for (const auto& axes : cases)
    for (int keepdims : {0, 1}) {
      CAPTURE(axes.size());
      CAPTURE(axes.empty() ? 9 : axes[0]);
      CAPTURE(keepdims);
      kernels::KernelInfo info;
      info.op_type = info.node_name = "ReduceLogSumExp";
      info.opset = 13;
      info.num_outputs = 1;
      info.attrs = kernels::Attrs(axes.empty() ? nlohmann::json{{"keepdims", keepdims}} : nlohmann::json{{"axes", axes}, {"keepdims", keepdims}});
      info.input_types = {DType::kFloat32};
      info.input_shapes = {shape};
      std::vector<bool> reduced(4, axes.empty());
      for (int64_t a : axes) reduced[a < 0 ? a + 4 : a] = true;
      std::vector<int64_t> out;
      for (int k = 0; k < 4; ++k)
        if (!reduced[k] || keepdims) out.push_back(reduced[k] ? 1 : shape[k]);
      info.output_shapes = {out};
      const auto [fast, slow] = ArenaAndReferenceOutputs(info, {&x});
      REQUIRE(fast.shape == slow.shape);
      for (int64_t i = 0; i < fast.size(); ++i) {
        const float got = fast.data<float>()[i], want = slow.data<float>()[i];
        if (std::isnan(want)) CHECK_MESSAGE(std::isnan(got), i << ": " << got);
        else if (std::isinf(want)) CHECK(got == want);
        else CHECK(got == doctest::Approx(want).epsilon(1e-5).scale(1.0));
      }
    }
}

TEST_CASE("Pow in the arena: squares, cubes, roots, reciprocals and other exponents as the reference computes them") {
  const std::vector<int64_t> shape = {3, 70, 41};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 401 - 100) * 0.0371f;
  for (float e : {2.f, 3.f, 1.f, -1.f, 0.5f, 1.f / 3, 2.5f, -2.f}) {
    CAPTURE(e);
    TypedTensor exponent(DType::kFloat32, {});
    exponent.data<float>()[0] = e;
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Pow";
    info.opset = 15;
    info.num_outputs = 1;
    info.input_types = {DType::kFloat32, DType::kFloat32};
    info.input_shapes = {shape, exponent.shape};
    info.output_shapes = {shape};
    info.constant_inputs = {nullptr, std::make_shared<TypedTensor>(exponent)};
    auto arena = kernels::KernelRegistry::Default().Create(info, "float32");
    auto reference = kernels::KernelRegistry::Default().Create(info, "reference");
    REQUIRE((arena.ok() && reference.ok()));
    REQUIRE((*arena)->Arena() != nullptr);
    std::vector<TypedTensor> fast(1), slow(1);
    REQUIRE((*arena)->Compute({&x, &exponent}, &fast).ok());
    REQUIRE((*reference)->Compute({&x, &exponent}, &slow).ok());
    const Comparison c = CompareTypedTensors(fast, slow);  // NaN where the base is negative, on both sides
    CHECK_MESSAGE(c.ok, c.worst);
  }
}

TEST_CASE("Transpose in the arena moves every element as the reference does: every permutation of 4-D shapes around the tiles and the threads' split") {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 5, 3, 7}, {1, 24, 17, 19}, {1, 48, 30, 30}, {3, 1, 33, 4}}) {
    TypedTensor x(DType::kFloat32, shape);
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.5f;
    std::vector<int64_t> perm = {0, 1, 2, 3};
    do {
      CAPTURE(shape[1]);
      CAPTURE(perm[0] * 1000 + perm[1] * 100 + perm[2] * 10 + perm[3]);
      kernels::KernelInfo info;
      info.op_type = info.node_name = "Transpose";
      info.num_outputs = 1;
      info.input_types = {DType::kFloat32};
      info.input_shapes = {shape};
      info.output_shapes = {std::vector<int64_t>{shape[perm[0]], shape[perm[1]], shape[perm[2]], shape[perm[3]]}};
      info.attrs = kernels::Attrs(nlohmann::json{{"perm", perm}});
      CheckArenaAgainstReference(info, {&x});
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

// Slice's arena kernel against the reference (which now copies rows for every dtype) over starts
// and ends outside the axis, negative and oversized steps, empty results, and the reference's int64
// slice against its float32 one: the same elements.
TEST_CASE("Slice in the arena and the reference of every dtype cut the same elements: starts and ends outside the axis, negative and huge steps, empty results") {
  const std::vector<int64_t> shape = {3, 5, 7};
  TypedTensor x(DType::kFloat32, shape), xi(DType::kInt64, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>(i) + 0.5f, xi.data<int64_t>()[i] = i;
  struct Cut {
    int64_t start, end, axis, step;
  };
  const int64_t big = INT64_MAX, small = INT64_MIN;
  const std::vector<Cut> cuts = {{0, 7, 2, 1},     {1, -1, 2, 2},   {-100, 100, 1, 1}, {6, -100, 2, -1}, {-100, -100, 2, -1}, {100, 0, 2, -2},
                                 {4, 2, 1, 1},     {0, big, 2, big}, {big, small, 1, -1}, {-1, small, 0, -3}, {2, 2, 0, 1},    {0, 1, 2, small}};
  for (const Cut& c : cuts) {
    CAPTURE(c.start);
    CAPTURE(c.end);
    CAPTURE(c.axis);
    CAPTURE(c.step);
    const auto starts = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({1}, {c.start}));
    const auto ends = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({1}, {c.end}));
    const auto axes = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({1}, {c.axis}));
    const auto steps = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({1}, {c.step}));
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Slice";
    info.opset = 13;
    info.num_outputs = 1;
    info.input_types = {DType::kFloat32, DType::kInt64, DType::kInt64, DType::kInt64, DType::kInt64};
    info.constant_inputs = {nullptr, starts, ends, axes, steps};
    const kernels::KernelInputs inputs = {&x, starts.get(), ends.get(), axes.get(), steps.get()};
    auto reference = kernels::KernelRegistry::Default().Create(info, "reference");
    REQUIRE(reference.ok());
    std::vector<TypedTensor> sliced(1);
    REQUIRE((*reference)->Compute(inputs, &sliced).ok());
    // ONNX's clamping: a start before the axis stepping backward is its first element.
    if (c.start == -100 && c.end == -100) CHECK(sliced[0].shape == std::vector<int64_t>{3, 5, 1});
    const std::vector<int64_t> one = {1};
    info.input_shapes = {shape, one, one, one, one};
    info.output_shapes = {sliced[0].shape};
    CheckArenaAgainstReference(info, inputs);
    std::vector<TypedTensor> as_ints(1);
    REQUIRE((*reference)->Compute({&xi, starts.get(), ends.get(), axes.get(), steps.get()}, &as_ints).ok());
    REQUIRE(as_ints[0].shape == sliced[0].shape);
    for (int64_t i = 0; i < sliced[0].size(); ++i) CHECK(static_cast<float>(as_ints[0].data<int64_t>()[i]) + 0.5f == sliced[0].data<float>()[i]);
  }
}

TEST_CASE("Concat in the arena copies as the reference does: small, many rows on the threads, and few large rows cut into pieces") {
  // {shapes of the inputs, axis}: one thread; 300 rows of 3 inputs along the last axis; one row of
  // channel planes whose pieces (32Ki elements) end inside an input.
  const std::vector<std::pair<std::vector<std::vector<int64_t>>, int64_t>> cases = {
      {{{1, 3, 8, 8}, {1, 5, 8, 8}}, 1},
      {{{300, 100}, {300, 7}, {300, 150}}, 1},
      {{{1, 40, 37, 41}, {1, 13, 37, 41}, {1, 1, 37, 41}}, 1},
      {{{2, 20, 64, 33}, {2, 20, 64, 33}}, 2},
  };
  for (const auto& one : cases) {
    const std::vector<std::vector<int64_t>>& shapes = one.first;
    const int64_t axis = one.second;
    CAPTURE(shapes.size());
    std::vector<TypedTensor> xs;
    std::vector<int64_t> out_shape = shapes[0];
    out_shape[axis] = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      xs.emplace_back(DType::kFloat32, shapes[i]);
      for (int64_t k = 0; k < xs.back().size(); ++k) xs.back().data<float>()[k] = static_cast<float>(k % 977) * 0.5f + static_cast<float>(i);
      out_shape[axis] += shapes[i][axis];
    }
    kernels::KernelInfo info;
    info.op_type = info.node_name = "Concat";
    info.opset = 13;
    info.num_outputs = 1;
    info.attrs = kernels::Attrs(nlohmann::json{{"axis", axis}});
    info.input_types.assign(shapes.size(), DType::kFloat32);
    info.input_shapes.assign(shapes.begin(), shapes.end());
    info.output_shapes = {out_shape};
    kernels::KernelInputs inputs;
    for (const auto& x : xs) inputs.push_back(&x);
    CheckArenaAgainstReference(info, inputs);
  }
}

TEST_CASE("Resize of NCHW planes in the arena, linear and nearest, up and down, under each coordinate transformation, on the threads: as the reference computes it") {
  const std::vector<int64_t> shape = {1, 6, 40, 50};
  TypedTensor x(DType::kFloat32, shape);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 1013) * 0.01f - 5.f;
  const auto empty_roi = std::make_shared<TypedTensor>(DType::kFloat32, std::vector<int64_t>{0});
  const auto no_scales = std::make_shared<TypedTensor>(DType::kFloat32, std::vector<int64_t>{0});
  for (const std::string mode : {"linear", "nearest"})
    for (const std::string transform : {"align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"})
      for (const std::vector<int64_t>& out_shape : std::vector<std::vector<int64_t>>{{1, 6, 80, 100}, {1, 6, 17, 23}, {1, 6, 40, 129}}) {
        CAPTURE(mode);
        CAPTURE(transform);
        CAPTURE(out_shape[2]);
        auto sizes = std::make_shared<TypedTensor>(TypedTensor::Of<int64_t>({4}, {out_shape[0], out_shape[1], out_shape[2], out_shape[3]}));
        kernels::KernelInfo info;
        info.op_type = info.node_name = "Resize";
        info.opset = 13;
        info.num_outputs = 1;
        info.attrs = kernels::Attrs(nlohmann::json{{"mode", mode}, {"coordinate_transformation_mode", transform}});
        info.input_types = {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kInt64};
        info.input_shapes = {shape, empty_roi->shape, no_scales->shape, sizes->shape};
        info.output_shapes = {out_shape};
        info.constant_inputs = {nullptr, empty_roi, no_scales, sizes};
        info.constant_input = {false, true, true, true};
        const auto outputs = ArenaAndReferenceOutputs(info, {&x, empty_roi.get(), no_scales.get(), sizes.get()});
        const TypedTensor &fast = outputs.first, &slow = outputs.second;
        REQUIRE(fast.shape == slow.shape);
        float worst = 0.f;
        for (int64_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::abs(fast.data<float>()[i] - slow.data<float>()[i]));
        CHECK(worst <= 1e-5f);  // the reference weighs in double
      }
}

}  // namespace
}  // namespace tilebank::engine::model
