// A fake-quantized weight (QuantizeLinear -> DequantizeLinear of a float constant, as torch.onnx
// exports quantization-aware training) folds into the float constant it stands for, per tensor and
// per axis (0 and 1), int8 and uint8, in range and clamped: the same values as the QuantizeLinear
// and DequantizeLinear kernels compute (x / scale in float32 rounded to even, clamped, then
// (q - zero) * scale), and no quantization node is left.
#include "engine/passes/constant_fold.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/ir/onnx_import.h"
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

}  // namespace
}  // namespace tilebank::engine::model
