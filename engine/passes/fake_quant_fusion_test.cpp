// A QuantizeLinear -> DequantizeLinear pair on an activation becomes one FakeQuantizeLinear node
// computing, bit for bit, what the pair computes (uint8 and int8 zero points, values past the
// quantized range); a pair whose quantized tensor is also read elsewhere stays two nodes.
#include "engine/passes/fake_quant_fusion.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

const std::vector<int64_t> kShape = {2, 3, 7, 11};

void ZeroPoint(ModelBuilder* b, bool signed8, int value) {
  auto* t = b->g->add_initializer();
  t->set_name("zp");
  t->set_data_type(signed8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
  t->add_int32_data(value);
}

// x * 4 (past the 8-bit range at these scales) -> Q -> DQ -> y; `tap`: the quantized tensor is an
// output too.
std::string WritePair(const TempDir& dir, bool signed8, int zero, float scale, bool tap) {
  ModelBuilder b;
  b.Input("x", kShape);
  b.Floats("four", {}, {4.f});
  b.Floats("scale", {}, {scale});
  ZeroPoint(&b, signed8, zero);
  b.Node("Mul", {"x", "four"}, {"wide"});
  b.Node("QuantizeLinear", {"wide", "scale", "zp"}, {"q"});
  b.Node("DequantizeLinear", {"q", "scale", "zp"}, {"y"});
  b.Output("y", kShape);
  if (tap) ModelBuilder::SetShape(b.g->add_output(), "q", kShape, signed8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
  return b.Save(dir / (std::string(signed8 ? "s8" : "u8") + (tap ? "_tap" : "") + ".onnx"));
}

TEST_CASE("fake quant fusion: a Quantize -> Dequantize pair is one node computing what the two do, bit for bit") {
  TempDir dir;
  for (bool signed8 : {false, true}) {
    CAPTURE(signed8);
    const int zero = signed8 ? -3 : 128;
    const float scale = signed8 ? 0.02f : 0.015f;
    auto e = LoadModel(WritePair(dir, signed8, zero, scale, false), {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    const Graph& g = (*e)->graph();
    CHECK(std::count_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "FakeQuantizeLinear"; }) == 1);
    CHECK(std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear"; }));
    const std::vector<Tensor> inputs = RandomInputs(g, 11);
    std::vector<Tensor> out;
    REQUIRE((*e)->Run({&inputs[0]}, &out).ok());
    const double lo = signed8 ? -128 : 0, hi = signed8 ? 127 : 255;
    int saturated = 0, mismatched = 0;
    for (size_t i = 0; i < inputs[0].data.size(); ++i) {
      const float wide = inputs[0].data[i] * 4.f;
      const double q = std::clamp(std::nearbyint(static_cast<double>(wide / scale)) + zero, lo, hi);
      saturated += q == lo || q == hi;
      mismatched += static_cast<float>((q - zero) * scale) != out[0].data[i];
    }
    CHECK(saturated > 0);
    CHECK(mismatched == 0);
  }
}

TEST_CASE("fake quant fusion: a quantized tensor that is also an output keeps its pair") {
  TempDir dir;
  auto e = LoadModel(WritePair(dir, false, 128, 0.015f, true), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  for (const Node& n : (*e)->graph().nodes) CHECK(n.op_type != "FakeQuantizeLinear");
}

}  // namespace
}  // namespace tilebank::engine::model
