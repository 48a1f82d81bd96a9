// A zero Pad before a Conv or an AveragePool becomes the reader's pads: a TCN's causal left padding
// of a Conv1d (asymmetric), a symmetric 2-D one and an asymmetric 2-D one fold, computing what the
// model with the pads written on the Conv computes; Inception's Pad + AveragePool folds into an
// average that counts its pads; a Pad of ones, and a Pad before an average that leaves its own pads
// out of the count or has ceil_mode, stay.
#include "engine/passes/pad_conv_fusion.h"

#include <doctest/doctest.h>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

// The op after the Pad: a Conv, or an AveragePool with its count_include_pad and ceil_mode.
struct Reader {
  std::string op = "Conv";
  int64_t count_include_pad = 0, ceil_mode = 0;
};

// x -> [Pad `pads` with `value`] -> `reader` (kernel 3, stride 1, its own `conv_pads`) -> y.
std::string WritePadConv(const TempDir& dir, const std::string& name, const std::vector<int64_t>& x_shape, const std::vector<int64_t>& pads,
                         float value, const std::vector<int64_t>& conv_pads, const Reader& reader = {}) {
  ModelBuilder b;
  b.Input("x", x_shape);
  const bool conv = reader.op == "Conv";
  std::vector<int64_t> w_shape = {6, x_shape[1]}, y_shape = {x_shape[0], conv ? 6 : x_shape[1]}, kernel;
  const size_t spatial = x_shape.size() - 2;
  for (size_t d = 0; d < spatial; ++d) {
    w_shape.push_back(3);
    kernel.push_back(3);
    const int64_t padded = x_shape[2 + d] + (pads.empty() ? 0 : pads[2 + d] + pads[x_shape.size() + 2 + d]) + conv_pads[d] + conv_pads[spatial + d];
    y_shape.push_back(padded - 2);
  }
  if (conv) b.Weight("w", w_shape);
  std::string conv_input = "x";
  if (!pads.empty()) {
    b.Ints("pads", pads);
    b.Floats("value", {}, {value});
    b.Node("Pad", {"x", "pads", "value"}, {"padded"});
    conv_input = "padded";
  }
  if (conv) {
    ModelBuilder::IntsAttr(b.Node("Conv", {conv_input, "w"}, {"y"}), "pads", conv_pads);
  } else {
    onnx::NodeProto* pool = ModelBuilder::IntsAttr(b.Node("AveragePool", {conv_input}, {"y"}), "pads", conv_pads);
    ModelBuilder::IntsAttr(pool, "kernel_shape", kernel);
    ModelBuilder::IntAttr(pool, "count_include_pad", reader.count_include_pad);
    ModelBuilder::IntAttr(pool, "ceil_mode", reader.ceil_mode);
  }
  b.Output("y", y_shape);
  return b.Save(dir / (name + ".onnx"));
}

bool HasPad(const Executor& e) {
  for (const Node& n : e.graph().nodes)
    if (n.op_type == "Pad") return true;
  return false;
}

TEST_CASE("pad conv fusion: zero padding folds into a Conv or AveragePool's pads where its kernels take them") {
  struct Case {
    std::vector<int64_t> x, pads;
    float value;
    std::vector<int64_t> conv_pads, folded;  // folded: the pads written on the reader that compute the same; empty: the Pad stays
    Reader reader = {};
  };
  const Reader average{"AveragePool", 0, 0}, average_counting_pads{"AveragePool", 1, 0}, average_ceil{"AveragePool", 0, 1};
  const std::vector<Case> cases = {
      {{1, 4, 20}, {0, 0, 4, 0, 0, 0}, 0.0f, {0, 0}, {4, 0}},                          // causal Conv1d
      {{1, 4, 9, 8}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {1, 0, 1, 0}, {2, 1, 2, 1}},      // symmetric 2-D
      {{1, 4, 9, 8}, {0, 0, 0, 0, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {0, 0, 1, 1}},      // asymmetric 2-D (ZeroPad2d((0, 1, 0, 1)))
      {{1, 4, 20}, {0, 0, 2, 0, 0, 0}, 1.0f, {0, 0}, {}},                              // a Pad of ones: stays
      {{1, 5, 9, 8}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {1, 1, 1, 1}, average},                // Inception's avg_pool2d
      {{1, 5, 9, 8}, {0, 0, 1, 0, 0, 0, 0, 2}, 0.0f, {1, 1, 1, 1}, {2, 1, 1, 3}, average_counting_pads},  // its own pads counted too
      {{1, 5, 9, 8}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {1, 1, 1, 1}, {}, average},        // own pads left out of the count: stays
      {{1, 5, 9, 8}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {}, average_ceil},   // ceil_mode: stays
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(k);
    const Case& c = cases[k];
    TempDir dir;
    auto padded = LoadModel(WritePadConv(dir, "padded", c.x, c.pads, c.value, c.conv_pads, c.reader), {}, nullptr);
    REQUIRE_MESSAGE(padded.ok(), padded.status().message());
    CHECK(HasPad(**padded) == c.folded.empty());
    if (c.folded.empty()) continue;
    Reader counting = c.reader;
    counting.count_include_pad = 1;
    auto written = LoadModel(WritePadConv(dir, "written", c.x, {}, 0.0f, c.folded, counting), {}, nullptr);
    REQUIRE_MESSAGE(written.ok(), written.status().message());
    const std::vector<Tensor> inputs = RandomInputs((*padded)->graph(), 3);
    std::vector<Tensor> a, b;
    REQUIRE((*padded)->Run({&inputs[0]}, &a).ok());
    REQUIRE((*written)->Run({&inputs[0]}, &b).ok());
    const Comparison compared = CompareTensors(a, b);
    CHECK_MESSAGE(compared.ok, compared.worst);
  }
}

}  // namespace
}  // namespace tilebank::engine::model
