// A fake-quantized weight (QuantizeLinear -> DequantizeLinear of a float constant, as torch.onnx
// exports quantization-aware training) folds into the float constant it stands for, per tensor and
// per axis (0 and 1), int8 and uint8, in range and clamped: the same values as the QuantizeLinear
// and DequantizeLinear kernels compute (x / scale in float32 rounded to even, clamped, then
// (q - zero) * scale), and no quantization node is left. A BatchNormalization after a MatMul or Gemm of
// a constant matrix (2-D) folds into a Gemm that computes what the two did; after a 3-D MatMul (its
// channels are not the matrix's columns) it stays.
#include "engine/passes/constant_fold.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/ir/onnx_import.h"
#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

TEST_CASE("constant folding: a fake-quantized weight becomes the float constant it stands for") {
  struct Case {
    int64_t axis;       // -1: per tensor
    bool is_signed;
    float scale = 0.01f;  // the first channel's; 0.002: most weights beyond the 8-bit range, clamped
  };
  const std::vector<int64_t> shape = {4, 3, 5};
  for (const Case& c : {Case{-1, true}, Case{0, true}, Case{1, false}, Case{0, true, 0.002f}, Case{-1, false, 0.002f}}) {
    CAPTURE(c.axis);
    CAPTURE(c.scale);
    CAPTURE(c.is_signed);
    ModelBuilder b;
    b.Input("x", shape);
    const std::vector<float> w = b.Weight("w", shape);
    const int64_t channels = c.axis < 0 ? 1 : shape[c.axis];
    std::vector<float> scales;
    std::vector<int64_t> zeros;
    for (int64_t k = 0; k < channels; ++k) scales.push_back(c.scale + 0.005f * k), zeros.push_back(c.is_signed ? 0 : 100 + k);
    b.Floats("scale", channels == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{channels}, scales);
    auto* z = b.g->add_initializer();
    z->set_name("zero");
    z->set_data_type(c.is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
    if (channels > 1) z->add_dims(channels);
    for (int64_t v : zeros) z->add_int32_data(static_cast<int32_t>(v));
    auto* q = b.Node("QuantizeLinear", {"w", "scale", "zero"}, {"w_q"});
    auto* dq = b.Node("DequantizeLinear", {"w_q", "scale", "zero"}, {"w_fake"});
    if (c.axis >= 0) ModelBuilder::IntAttr(q, "axis", c.axis), ModelBuilder::IntAttr(dq, "axis", c.axis);
    b.Node("Add", {"x", "w_fake"}, {"y"});
    b.Output("y", shape);
    TempDir dir;
    auto g = ImportOnnx(b.Save(dir / "fake_quant.onnx"), {});
    REQUIRE_MESSAGE(g.ok(), g.status().message());
    REQUIRE(FoldConstants(&g.value()).ok());
    for (const Node& n : g->nodes) CHECK((n.op_type != "QuantizeLinear" && n.op_type != "DequantizeLinear"));
    const Node& add = g->nodes.back();
    REQUIRE(add.op_type == "Add");
    const int folded = add.inputs[1];
    REQUIRE(g->IsConstant(folded));
    const ConstTensor& got = *g->values[folded].constant;
    REQUIRE(got.shape == shape);
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(std::max<int64_t>(c.axis, 0)) + 1; d < shape.size(); ++d) inner *= shape[d];
    for (int64_t i = 0; i < got.size(); ++i) {
      const int64_t k = c.axis < 0 ? 0 : (i / inner) % channels;
      const float level = std::clamp(std::nearbyint(w[i] / scales[k]) + static_cast<float>(zeros[k]), c.is_signed ? -128.0f : 0.0f, c.is_signed ? 127.0f : 255.0f);
      CHECK(got.floats[i] == (level - static_cast<float>(zeros[k])) * scales[k]);
    }
  }
}

// A model x [rows, 5] -> `producer` (MatMul of w [5, 6], or Gemm of w [6, 5] transposed with c [6],
// alpha 0.5, beta 2) -> BatchNormalization over the 6 columns -> y; x is [2, rows, 5] with `rank3`.
struct LinearNormCase {
  std::string producer;
  bool rank3 = false;
};

TEST_CASE("constant folding: BatchNormalization after a MatMul or Gemm of a constant matrix folds into a Gemm") {
  for (const LinearNormCase& c : {LinearNormCase{"MatMul"}, LinearNormCase{"Gemm"}, LinearNormCase{"MatMul", true}}) {
    CAPTURE(c.producer);
    CAPTURE(c.rank3);
    const int64_t rows = 7;
    const std::vector<int64_t> in_shape = c.rank3 ? std::vector<int64_t>{2, rows, 5} : std::vector<int64_t>{rows, 5};
    const std::vector<int64_t> out_shape = c.rank3 ? std::vector<int64_t>{2, rows, 6} : std::vector<int64_t>{rows, 6};
    ModelBuilder b;
    b.Input("x", in_shape);
    const bool gemm = c.producer == "Gemm";
    const std::vector<float> w = b.Weight("w", gemm ? std::vector<int64_t>{6, 5} : std::vector<int64_t>{5, 6});
    const std::vector<float> bias = b.Weight("c", {6});
    const int64_t channels = c.rank3 ? rows : 6;
    const std::vector<float> scale = b.Weight("scale", {channels}), shift = b.Weight("shift", {channels}), mean = b.Weight("mean", {channels});
    std::vector<float> var = b.Weight("var", {channels});
    for (auto& v : *b.g->mutable_initializer(b.g->initializer_size() - 1)->mutable_float_data()) v = std::fabs(v) + 0.5f;
    for (auto& v : var) v = std::fabs(v) + 0.5f;
    if (gemm) {
      auto* node = ModelBuilder::IntAttr(b.Node("Gemm", {"x", "w", "c"}, {"h"}), "transB", 1);
      for (auto [name, value] : {std::pair<const char*, float>{"alpha", 0.5f}, {"beta", 2.f}}) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(value);
      }
    } else {
      b.Node("MatMul", {"x", "w"}, {"h"});
    }
    b.Node("BatchNormalization", {"h", "scale", "shift", "mean", "var"}, {"y"});
    b.Output("y", out_shape);
    TempDir dir;
    const std::string path = b.Save(dir / "linear_norm.onnx");
    auto e = LoadModel(path, {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    bool normalization_left = false;
    for (const Node& n : (*e)->graph().nodes) normalization_left |= n.op_type == "BatchNormalization";
    CHECK(normalization_left == c.rank3);
    std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 3);
    std::vector<Tensor> out;
    REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].shape == out_shape);
    const int64_t batches = c.rank3 ? 2 : 1;
    for (int64_t p = 0; p < batches; ++p)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t m = 0; m < 6; ++m) {
          double h = 0;
          for (int64_t k = 0; k < 5; ++k) h += inputs[0].data[(p * rows + r) * 5 + k] * w[gemm ? m * 5 + k : k * 6 + m];
          if (gemm) h = 0.5 * h + 2.0 * bias[m];
          const int64_t ch = c.rank3 ? r : m;
          const double want = (h - mean[ch]) / std::sqrt(var[ch] + 1e-5) * scale[ch] + shift[ch];
          CHECK(out[0].data[(p * rows + r) * 6 + m] == doctest::Approx(want).epsilon(1e-4));
        }
  }
}

}  // namespace
}  // namespace tilebank::engine::model
