// ONNX Runtime's com.microsoft quantized ops, each in a model of its own, compute what their
// definitions say, checked against plain loops (dequantize, the float op, quantize with rounding
// to even and saturation) to within one step: QLinearAdd and QLinearMul (uint8, int8), QLinearSigmoid,
// QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool (NCHW and NHWC), QGemm (per-column
// weight scales, an int32 bias, alpha, quantized and float output). A com.microsoft op it does not
// lower is refused by name.
#include "engine/ir/contrib_quantized_lowering.h"

#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

template <class T>
void Constant(ModelBuilder* b, const std::string& name, int type, const std::vector<int64_t>& shape, const std::vector<T>& values) {
  auto* t = b->g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

onnx::NodeProto* Contrib(ModelBuilder* b, const std::string& op, const std::vector<std::string>& in, const std::string& out) {
  onnx::NodeProto* n = b->Node(op, in, {out});
  n->set_domain("com.microsoft");
  return n;
}

ModelBuilder ContribModel() {
  ModelBuilder b;
  auto* contrib = b.model.add_opset_import();
  contrib->set_domain("com.microsoft");
  contrib->set_version(1);
  return b;
}

int64_t Quantize(double v, double scale, int64_t zero, bool is_signed) {
  const double q = std::nearbyint(v / scale) + zero;  // the default rounding mode: to even
  return static_cast<int64_t>(std::clamp(q, is_signed ? -128.0 : 0.0, is_signed ? 127.0 : 255.0));
}

// Runs the model on `inputs` and checks output 0 against `expected` (quantized values; or float
// ones within 1e-4 when `float_output`).
void CheckRun(ModelBuilder& b, const std::vector<TypedTensor>& inputs, const std::vector<double>& expected, bool float_output = false) {
  TempDir dir;
  auto e = LoadModel(b.Save(dir / "contrib.onnx"), {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  std::vector<const TypedTensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  std::vector<TypedTensor> out;
  REQUIRE((*e)->Run(in, &out).ok());
  REQUIRE(out[0].size() == static_cast<int64_t>(expected.size()));
  double worst = 0;
  for (int64_t i = 0; i < out[0].size(); ++i) worst = std::max(worst, std::fabs(out[0].At(i) - expected[i]));
  CHECK(worst <= (float_output ? 1e-4 : 1.0));
}

template <class T>
TypedTensor Values8(std::vector<int64_t> shape, int seed) {
  TypedTensor t(DTypeOf<T>(), std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<T>()[i] = static_cast<T>(std::is_signed_v<T> ? (i * 37 + seed * 11) % 256 - 128 : (i * 37 + seed * 11) % 256);
  return t;
}

template <class T>
void CheckBinaryAndUnary() {
  constexpr bool kSigned = std::is_signed_v<T>;
  const int type = kSigned ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  const std::vector<int64_t> shape = {1, 4, 3, 3};
  const TypedTensor a = Values8<T>(shape, 1), b = Values8<T>(shape, 2);
  const double as = 0.05, bs = 0.03, cs = 0.07;
  const T az = 3, bz = kSigned ? -2 : 7, cz = 5;
  for (const std::string op : {"QLinearAdd", "QLinearMul"}) {
    CAPTURE(op);
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", shape, type);
    ModelBuilder::SetShape(m.g->add_input(), "b", shape, type);
    Constant<float>(&m, "as", onnx::TensorProto::FLOAT, {}, {float(as)});
    Constant<float>(&m, "bs", onnx::TensorProto::FLOAT, {}, {float(bs)});
    Constant<float>(&m, "cs", onnx::TensorProto::FLOAT, {}, {float(cs)});
    Constant<T>(&m, "az", type, {}, {az});
    Constant<T>(&m, "bz", type, {}, {bz});
    Constant<T>(&m, "cz", type, {}, {cz});
    Contrib(&m, op, {"a", "as", "az", "b", "bs", "bz", "cs", "cz"}, "c");
    ModelBuilder::SetShape(m.g->add_output(), "c", shape, type);
    std::vector<double> expected;
    for (int64_t i = 0; i < a.size(); ++i) {
      const double x = as * (a.At(i) - az), y = bs * (b.At(i) - bz);
      expected.push_back(Quantize(op == "QLinearAdd" ? x + y : x * y, cs, cz, kSigned));
    }
    CheckRun(m, {a, b}, expected);
  }
  for (const std::string op : {"QLinearSigmoid", "QLinearLeakyRelu"}) {
    CAPTURE(op);
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", shape, type);
    Constant<float>(&m, "xs", onnx::TensorProto::FLOAT, {}, {float(as)});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {float(cs)});
    Constant<T>(&m, "xz", type, {}, {az});
    Constant<T>(&m, "yz", type, {}, {cz});
    onnx::NodeProto* n = Contrib(&m, op, {"a", "xs", "xz", "ys", "yz"}, "c");
    if (op == "QLinearLeakyRelu") {
      auto* alpha = n->add_attribute();
      alpha->set_name("alpha");
      alpha->set_type(onnx::AttributeProto::FLOAT);
      alpha->set_f(0.2f);
    }
    ModelBuilder::SetShape(m.g->add_output(), "c", shape, type);
    std::vector<double> expected;
    for (int64_t i = 0; i < a.size(); ++i) {
      const double x = as * (a.At(i) - az);
      expected.push_back(Quantize(op == "QLinearSigmoid" ? 1 / (1 + std::exp(-x)) : (x >= 0 ? x : 0.2 * x), cs, cz, kSigned));
    }
    CheckRun(m, {a}, expected);
  }
}

TEST_CASE("contrib quantized ops: QLinearAdd, QLinearMul, QLinearSigmoid and QLinearLeakyRelu on uint8 and int8") {
  CheckBinaryAndUnary<uint8_t>();
  CheckBinaryAndUnary<int8_t>();
}

TEST_CASE("contrib quantized ops: QLinearConcat and QLinearGlobalAveragePool (NCHW and NHWC)") {
  const int type = onnx::TensorProto::UINT8;
  const TypedTensor a = Values8<uint8_t>({1, 2, 3, 4}, 1), b = Values8<uint8_t>({1, 3, 3, 4}, 2);
  {
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", {1, 2, 3, 4}, type);
    ModelBuilder::SetShape(m.g->add_input(), "b", {1, 3, 3, 4}, type);
    Constant<float>(&m, "s", onnx::TensorProto::FLOAT, {}, {0.1f});
    Constant<float>(&m, "as", onnx::TensorProto::FLOAT, {}, {0.05f});
    Constant<float>(&m, "bs", onnx::TensorProto::FLOAT, {}, {0.2f});
    Constant<uint8_t>(&m, "z", type, {}, {10});
    Constant<uint8_t>(&m, "az", type, {}, {3});
    Constant<uint8_t>(&m, "bz", type, {}, {100});
    ModelBuilder::IntAttr(Contrib(&m, "QLinearConcat", {"s", "z", "a", "as", "az", "b", "bs", "bz"}, "c"), "axis", 1);
    ModelBuilder::SetShape(m.g->add_output(), "c", {1, 5, 3, 4}, type);
    std::vector<double> expected;
    for (int64_t i = 0; i < a.size(); ++i) expected.push_back(Quantize(0.05 * (a.At(i) - 3), 0.1, 10, false));
    for (int64_t i = 0; i < b.size(); ++i) expected.push_back(Quantize(0.2 * (b.At(i) - 100), 0.1, 10, false));
    CheckRun(m, {a, b}, expected);
  }
  for (int channels_last : {0, 1}) {
    CAPTURE(channels_last);
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", {1, 2, 3, 4}, type);
    Constant<float>(&m, "xs", onnx::TensorProto::FLOAT, {}, {0.05f});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {0.02f});
    Constant<uint8_t>(&m, "xz", type, {}, {3});
    Constant<uint8_t>(&m, "yz", type, {}, {1});
    ModelBuilder::IntAttr(Contrib(&m, "QLinearGlobalAveragePool", {"a", "xs", "xz", "ys", "yz"}, "c"), "channels_last", channels_last);
    // NCHW [1, 2, 3, 4] -> [1, 2, 1, 1]; NHWC [1, H 2, W 3, C 4] -> [1, 1, 1, 4]
    const std::vector<int64_t> out_shape = channels_last ? std::vector<int64_t>{1, 1, 1, 4} : std::vector<int64_t>{1, 2, 1, 1};
    ModelBuilder::SetShape(m.g->add_output(), "c", out_shape, type);
    std::vector<double> expected;
    const int64_t channels = channels_last ? 4 : 2;
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0;
      const int64_t count = channels_last ? 6 : 12;
      for (int64_t p = 0; p < count; ++p) sum += 0.05 * (a.At(channels_last ? p * 4 + c : c * 12 + p) - 3);
      expected.push_back(Quantize(sum / count, 0.02, 1, false));
    }
    CheckRun(m, {a}, expected);
  }
}

TEST_CASE("contrib quantized ops: QGemm with per-column scales, an int32 bias and alpha, quantized and float") {
  const int64_t M = 3, K = 8, N = 5;
  const TypedTensor a = Values8<uint8_t>({M, K}, 4);
  std::vector<int8_t> w(K * N);  // [K, N]
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(int(i * 29 % 255) - 127);
  const std::vector<float> w_scale = {0.01f, 0.02f, 0.015f, 0.03f, 0.005f};
  const std::vector<int32_t> bias = {100, -50, 0, 300, -200};
  for (bool quantized : {true, false}) {
    CAPTURE(quantized);
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", {M, K}, onnx::TensorProto::UINT8);
    Constant<float>(&m, "as", onnx::TensorProto::FLOAT, {}, {0.04f});
    Constant<uint8_t>(&m, "az", onnx::TensorProto::UINT8, {}, {7});
    Constant<int8_t>(&m, "w", onnx::TensorProto::INT8, {K, N}, w);
    Constant<float>(&m, "ws", onnx::TensorProto::FLOAT, {N}, w_scale);
    Constant<int8_t>(&m, "wz", onnx::TensorProto::INT8, {N}, std::vector<int8_t>(N, 0));
    Constant<int32_t>(&m, "bias", onnx::TensorProto::INT32, {N}, bias);
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {0.05f});
    Constant<uint8_t>(&m, "yz", onnx::TensorProto::UINT8, {}, {128});
    std::vector<std::string> in = {"a", "as", "az", "w", "ws", "wz", "bias"};
    if (quantized) in.insert(in.end(), {"ys", "yz"});
    auto* alpha = Contrib(&m, "QGemm", in, "y")->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.5f);
    ModelBuilder::SetShape(m.g->add_output(), "y", {M, N}, quantized ? onnx::TensorProto::UINT8 : onnx::TensorProto::FLOAT);
    std::vector<double> expected;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = bias[j];
        for (int64_t k = 0; k < K; ++k) acc += (a.At(i * K + k) - 7) * double(w[k * N + j]);
        const double y = 0.5 * acc * 0.04f * w_scale[j];
        expected.push_back(quantized ? Quantize(y, 0.05, 128, false) : y);
      }
    CheckRun(m, {a}, expected, !quantized);
  }
}

TEST_CASE("contrib quantized ops: as ONNX Runtime defines them where ONNX differs (output type, Softmax's axis, NWC, opset 12)") {
  {  // an int8 QLinearSigmoid without an output zero point writes int8, as its input
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", {2, 3}, onnx::TensorProto::INT8);
    Constant<float>(&m, "xs", onnx::TensorProto::FLOAT, {}, {0.05f});
    Constant<int8_t>(&m, "xz", onnx::TensorProto::INT8, {}, {-3});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {1.0f / 256});
    Contrib(&m, "QLinearSigmoid", {"a", "xs", "xz", "ys"}, "c");
    ModelBuilder::SetShape(m.g->add_output(), "c", {2, 3}, onnx::TensorProto::INT8);
    const TypedTensor a = Values8<int8_t>({2, 3}, 5);
    std::vector<double> expected;
    for (int64_t i = 0; i < a.size(); ++i) expected.push_back(Quantize(1 / (1 + std::exp(-0.05 * (a.At(i) + 3))), 1.0 / 256, 0, true));
    CheckRun(m, {a}, expected);
  }
  {  // QLinearSoftmax without an axis in an opset-12 model: over the last axis, not the flattened rest
    ModelBuilder m = ContribModel();
    m.model.mutable_opset_import(0)->set_version(12);
    ModelBuilder::SetShape(m.g->add_input(), "a", {2, 3, 4}, onnx::TensorProto::UINT8);
    Constant<float>(&m, "xs", onnx::TensorProto::FLOAT, {}, {0.1f});
    Constant<uint8_t>(&m, "xz", onnx::TensorProto::UINT8, {}, {128});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {1.0f / 256});
    Constant<uint8_t>(&m, "yz", onnx::TensorProto::UINT8, {}, {0});
    ModelBuilder::IntAttr(Contrib(&m, "QLinearSoftmax", {"a", "xs", "xz", "ys", "yz"}, "c"), "opset", 12);
    ModelBuilder::SetShape(m.g->add_output(), "c", {2, 3, 4}, onnx::TensorProto::UINT8);
    const TypedTensor a = Values8<uint8_t>({2, 3, 4}, 6);
    std::vector<double> expected;
    for (int64_t row = 0; row < 6; ++row) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) sum += std::exp(0.1 * (a.At(row * 4 + k) - 128));
      for (int64_t k = 0; k < 4; ++k) expected.push_back(Quantize(std::exp(0.1 * (a.At(row * 4 + k) - 128)) / sum, 1.0 / 256, 0, false));
    }
    CheckRun(m, {a}, expected);
  }
  {  // QLinearGlobalAveragePool over an NWC input [1, L 5, C 3] -> [1, 1, 3]
    ModelBuilder m = ContribModel();
    ModelBuilder::SetShape(m.g->add_input(), "a", {1, 5, 3}, onnx::TensorProto::UINT8);
    Constant<float>(&m, "xs", onnx::TensorProto::FLOAT, {}, {0.05f});
    Constant<uint8_t>(&m, "xz", onnx::TensorProto::UINT8, {}, {3});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {0.02f});
    Constant<uint8_t>(&m, "yz", onnx::TensorProto::UINT8, {}, {1});
    ModelBuilder::IntAttr(Contrib(&m, "QLinearGlobalAveragePool", {"a", "xs", "xz", "ys", "yz"}, "c"), "channels_last", 1);
    ModelBuilder::SetShape(m.g->add_output(), "c", {1, 1, 3}, onnx::TensorProto::UINT8);
    const TypedTensor a = Values8<uint8_t>({1, 5, 3}, 7);
    std::vector<double> expected;
    for (int64_t c = 0; c < 3; ++c) {
      double sum = 0;
      for (int64_t p = 0; p < 5; ++p) sum += 0.05 * (a.At(p * 3 + c) - 3);
      expected.push_back(Quantize(sum / 5, 0.02, 1, false));
    }
    CheckRun(m, {a}, expected);
  }
  {  // QGemm (transB, per-tensor) in an opset-12 model, where DequantizeLinear has no axis
    ModelBuilder m = ContribModel();
    m.model.mutable_opset_import(0)->set_version(12);
    ModelBuilder::SetShape(m.g->add_input(), "a", {2, 4}, onnx::TensorProto::UINT8);
    Constant<float>(&m, "as", onnx::TensorProto::FLOAT, {}, {0.1f});
    Constant<uint8_t>(&m, "az", onnx::TensorProto::UINT8, {}, {10});
    const std::vector<int8_t> w = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};  // [N 3, K 4]
    Constant<int8_t>(&m, "w", onnx::TensorProto::INT8, {3, 4}, w);
    Constant<float>(&m, "ws", onnx::TensorProto::FLOAT, {}, {0.02f});
    Constant<int8_t>(&m, "wz", onnx::TensorProto::INT8, {}, {0});
    Constant<int32_t>(&m, "bias", onnx::TensorProto::INT32, {3}, {50, -50, 25});
    Constant<float>(&m, "ys", onnx::TensorProto::FLOAT, {}, {0.01f});
    Constant<uint8_t>(&m, "yz", onnx::TensorProto::UINT8, {}, {128});
    ModelBuilder::IntAttr(Contrib(&m, "QGemm", {"a", "as", "az", "w", "ws", "wz", "bias", "ys", "yz"}, "y"), "transB", 1);
    ModelBuilder::SetShape(m.g->add_output(), "y", {2, 3}, onnx::TensorProto::UINT8);
    const TypedTensor a = Values8<uint8_t>({2, 4}, 8);
    const std::vector<int32_t> bias = {50, -50, 25};
    std::vector<double> expected;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double acc = bias[j];
        for (int64_t k = 0; k < 4; ++k) acc += (a.At(i * 4 + k) - 10) * double(w[j * 4 + k]);
        expected.push_back(Quantize(acc * 0.1f * 0.02f, 0.01, 128, false));
      }
    CheckRun(m, {a}, expected);
  }
}

TEST_CASE("contrib quantized ops: a com.microsoft op it does not lower is refused by name") {
  ModelBuilder m = ContribModel();
  m.Input("x", {2, 3});
  Contrib(&m, "FusedMatMulActivation", {"x", "x"}, "y");
  m.Output("y", {2, 3});
  TempDir dir;
  auto e = LoadModel(m.Save(dir / "unknown.onnx"), {}, nullptr);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("FusedMatMulActivation") != std::string::npos);
  CHECK(e.status().message().find("com.microsoft") != std::string::npos);
}

}  // namespace
}  // namespace tilebank::engine::model
