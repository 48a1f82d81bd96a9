// ShuffleNet's channel shuffle (Reshape, Transpose of the channel factors, Reshape) becomes one
// Gather of the channels computing what the three nodes compute: two groups as torch writes it and
// three factors permuted, checked against the transpose done by hand; halves sliced off it become
// a Gather each; between two convolutions it
// runs in their layout family and computes the row-major result; a Transpose that moves a spatial
// axis, and a split value something else reads, stay.
#include "engine/passes/channel_shuffle.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <limits>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

constexpr int64_t kH = 4, kW = 5;

// x [1, C, H, W] -> [1 x1 Conv ->] Reshape [1, factors..., H, W] -> Transpose `perm` -> Reshape
// [1, C, H, W] [-> 1x1 Conv] -> y; `split_out`: the split value is also a model output; `halves`:
// y is sliced into its two halves of channels, the outputs y0 and y1.
std::string WriteShuffle(const TempDir& dir, const std::string& name, const std::vector<int64_t>& factors, const std::vector<int64_t>& perm,
                         bool convs, bool split_out = false, bool halves = false, bool reverse_w = false) {
  int64_t C = 1;
  for (int64_t f : factors) C *= f;
  ModelBuilder b;
  b.Input("x", {1, C, kH, kW});
  std::string in = "x";
  if (convs) {
    b.Weight("w0", {C, C, 1, 1});
    b.Node("Conv", {"x", "w0"}, {"c0"});
    in = "c0";
  }
  std::vector<int64_t> split = {1}, transposed = {1};
  split.insert(split.end(), factors.begin(), factors.end());
  split.push_back(kH);
  split.push_back(kW);
  for (size_t a = 1; a < perm.size(); ++a) transposed.push_back(split[static_cast<size_t>(perm[a])]);
  b.Ints("split_shape", split);
  b.Ints("merged_shape", {1, C, kH, kW});
  b.Node("Reshape", {in, "split_shape"}, {"split"});
  ModelBuilder::IntsAttr(b.Node("Transpose", {"split"}, {"transposed"}), "perm", perm);
  b.Node("Reshape", {"transposed", "merged_shape"}, {convs ? "shuffled" : "y"});
  if (convs) {
    b.Weight("w1", {C, C, 1, 1});
    b.Node("Conv", {"shuffled", "w1"}, {"y"});
  }
  if (halves) {
    b.Ints("starts0", {0});
    b.Ints("starts1", {C / 2});
    b.Ints("ends0", {C / 2});
    b.Ints("ends1", {C});
    b.Ints("axes", {1});
    b.Node("Slice", {"y", "starts0", "ends0", "axes"}, {"y0"});
    if (reverse_w) {  // the second half also reversed along W (a step of -1 keeps W's size)
      b.Ints("starts_w", {C / 2, -1});
      b.Ints("ends_w", {C, std::numeric_limits<int64_t>::min()});
      b.Ints("axes_w", {1, 3});
      b.Ints("steps_w", {1, -1});
      b.Node("Slice", {"y", "starts_w", "ends_w", "axes_w", "steps_w"}, {"y1"});
    } else {
      b.Node("Slice", {"y", "starts1", "ends1", "axes"}, {"y1"});
    }
    b.Output("y0", {1, C / 2, kH, kW});
    b.Output("y1", {1, C / 2, kH, kW});
  } else {
    b.Output("y", {1, C, kH, kW});
  }
  if (split_out) b.Output("split", split);
  return b.Save(dir / (name + ".onnx"));
}

// The Transpose by hand: x's channels as a row-major array of `factors`, axes permuted by `perm`
// (over the whole rank: N first, H and W last), read out row-major.
std::vector<float> ShuffledByHand(const std::vector<float>& x, const std::vector<int64_t>& factors, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims = {1};
  dims.insert(dims.end(), factors.begin(), factors.end());
  dims.push_back(kH);
  dims.push_back(kW);
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1), out_dims(rank);
  for (size_t a = rank - 1; a > 0; --a) strides[a - 1] = strides[a] * dims[a];
  for (size_t a = 0; a < rank; ++a) out_dims[a] = dims[static_cast<size_t>(perm[a])];
  std::vector<float> y(x.size());
  for (size_t o = 0; o < y.size(); ++o) {
    int64_t rest = static_cast<int64_t>(o), source = 0;
    for (size_t a = rank; a-- > 0;) {
      source += (rest % out_dims[a]) * strides[static_cast<size_t>(perm[a])];
      rest /= out_dims[a];
    }
    y[o] = x[static_cast<size_t>(source)];
  }
  return y;
}

size_t Count(const Executor& e, const std::string& op_type) {
  size_t n = 0;
  for (const Node& node : e.graph().nodes) n += node.op_type == op_type;
  return n;
}

TEST_CASE("channel shuffle: Reshape, Transpose of the channel factors and Reshape become a Gather of the channels") {
  struct Case {
    std::vector<int64_t> factors, perm;
  };
  const std::vector<Case> cases = {{{2, 12}, {0, 2, 1, 3, 4}},          // ShuffleNet-V2: two groups
                                   {{2, 3, 4}, {0, 3, 1, 2, 4, 5}}};   // three factors, rotated
  for (size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(k);
    TempDir dir;
    auto e = LoadModel(WriteShuffle(dir, "shuffle", cases[k].factors, cases[k].perm, false), {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    CHECK(Count(**e, "Gather") == 1);
    CHECK(Count(**e, "Transpose") == 0);
    const std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 5);
    std::vector<Tensor> out;
    REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
    REQUIRE(out.size() == 1);
    CHECK(out[0].data == ShuffledByHand(inputs[0].data, cases[k].factors, cases[k].perm));
  }
}

TEST_CASE("channel shuffle: halves sliced off the shuffle each gather their part of it") {
  TempDir dir;
  const std::vector<int64_t> factors = {2, 12}, perm = {0, 2, 1, 3, 4};
  auto e = LoadModel(WriteShuffle(dir, "halves", factors, perm, false, false, true), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  CHECK(Count(**e, "Gather") == 2);
  CHECK(Count(**e, "Slice") == 0);
  CHECK(Count(**e, "Transpose") == 0);
  const std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 9);
  std::vector<Tensor> out;
  REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
  REQUIRE(out.size() == 2);
  const std::vector<float> whole = ShuffledByHand(inputs[0].data, factors, perm);
  const size_t half = whole.size() / 2;
  CHECK(out[0].data == std::vector<float>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(half)));
  CHECK(out[1].data == std::vector<float>(whole.begin() + static_cast<std::ptrdiff_t>(half), whole.end()));
}

TEST_CASE("channel shuffle: a Slice that also reverses a spatial axis keeps the shuffle whole") {
  TempDir dir;
  const std::vector<int64_t> factors = {2, 12}, perm = {0, 2, 1, 3, 4};
  auto e = LoadModel(WriteShuffle(dir, "reversed", factors, perm, false, false, true, true), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  CHECK(Count(**e, "Gather") == 1);
  CHECK(Count(**e, "Slice") == 2);
  const std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 9);
  std::vector<Tensor> out;
  REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
  REQUIRE(out.size() == 2);
  const std::vector<float> whole = ShuffledByHand(inputs[0].data, factors, perm);
  const int64_t C = 24, plane = kH * kW;
  int wrong = 0;
  for (int64_t c = 0; c < C / 2; ++c)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        wrong += out[1].data[static_cast<size_t>(c * plane + h * kW + w)] != whole[static_cast<size_t>((C / 2 + c) * plane + h * kW + (kW - 1 - w))];
  CHECK(wrong == 0);
}

TEST_CASE("channel shuffle: between convolutions the Gather runs in their layout family and computes the row-major result") {
  TempDir dir;
  const std::string path = WriteShuffle(dir, "convs", {2, 24}, {0, 2, 1, 3, 4}, true);
  setenv("TILEBANK_MODEL_LAYOUTS", "row-major", 1);
  auto row_major = LoadModel(path, {}, nullptr);
  unsetenv("TILEBANK_MODEL_LAYOUTS");
  auto native = LoadModel(path, {}, nullptr);
  REQUIRE_MESSAGE(row_major.ok(), row_major.status().message());
  REQUIRE_MESSAGE(native.ok(), native.status().message());
  const std::vector<Tensor> inputs = RandomInputs((*native)->graph(), 7);
  std::vector<Tensor> a, b;
  REQUIRE((*row_major)->Run({&inputs[0]}, &a).ok());
  REQUIRE((*native)->Run({&inputs[0]}, &b).ok());
  const Comparison compared = CompareTensors(b, a);
  CHECK_MESSAGE(compared.ok, compared.worst);
  // Where oneDNN hands the convolution's output over in a layout of its own, the Gather takes it.
  std::string conv_layout, gather_layout;
  for (const NodeBinding& binding : (*native)->bindings()) {
    if (binding.op_type == "Gather") gather_layout = binding.layout;
    if (binding.op_type.rfind("Conv", 0) == 0 && conv_layout.empty()) conv_layout = binding.layout;
  }
  CHECK(gather_layout == conv_layout);
  CHECK_FALSE(gather_layout.empty());  // oneDNN hands a channels-last or blocked layout over on x86 with AVX2 or later
}

TEST_CASE("channel shuffle: a Transpose of a spatial axis, and a split value read elsewhere, stay") {
  TempDir dir;
  auto spatial = LoadModel(WriteShuffle(dir, "spatial", {2, 3}, {0, 2, 1, 4, 3}, false), {}, nullptr);
  REQUIRE_MESSAGE(spatial.ok(), spatial.status().message());
  CHECK(Count(**spatial, "Gather") == 0);
  auto shared = LoadModel(WriteShuffle(dir, "shared", {2, 3}, {0, 2, 1, 3, 4}, false, true), {}, nullptr);
  REQUIRE_MESSAGE(shared.ok(), shared.status().message());
  CHECK(Count(**shared, "Gather") == 0);
}

}  // namespace
}  // namespace tilebank::engine::model
