// With the propagators, ONNX's shape inference follows a Shape through Div, Mod, Max, Min and
// Identity into a Reshape's target, in one pass; a negative value or a zero divisor stays unknown.
#include "engine/ir/shape_data_propagators.h"

#include <doctest/doctest.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "tests/onnx_model_builder.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;

// x [4, 6, 8, 10] reshaped to op(Shape(x), k): the inferred shape of the result (empty: unknown).
std::vector<int64_t> ReshapedBy(const std::string& op_type, const std::vector<int64_t>& k) {
  ModelBuilder b;
  b.Input("x", {4, 6, 8, 10});
  b.Ints("k", k);
  b.Node("Shape", {"x"}, {"s"});
  if (op_type == "Identity") b.Node("Identity", {"s"}, {"t"});
  else b.Node(op_type, {"s", "k"}, {"t"});
  b.Node("Reshape", {"x", "t"}, {"y"});
  b.g->add_output()->set_name("y");
  onnx::ModelProto& model = b.model;
  RegisterShapeDataPropagators();
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions{true, 0, true});
  std::vector<int64_t> shape;
  for (const auto& out : model.graph().output())
    if (out.name() == "y" && out.type().tensor_type().has_shape())
      for (const auto& d : out.type().tensor_type().shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return shape;
}

TEST_CASE("shape data propagators: ONNX's inference follows a Shape through Div, Mod, Max, Min and Identity") {
  CHECK(ReshapedBy("Div", {2}) == std::vector<int64_t>{2, 3, 4, 5});
  CHECK(ReshapedBy("Div", {2, 3, 4, 5}) == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(ReshapedBy("Mod", {7}) == std::vector<int64_t>{4, 6, 1, 3});
  CHECK(ReshapedBy("Max", {5}) == std::vector<int64_t>{5, 6, 8, 10});
  CHECK(ReshapedBy("Min", {5}) == std::vector<int64_t>{4, 5, 5, 5});
  CHECK(ReshapedBy("Identity", {}) == std::vector<int64_t>{4, 6, 8, 10});
}

TEST_CASE("shape data propagators: a zero divisor or a negative operand propagates nothing") {
  CHECK(ReshapedBy("Div", {0}).empty());
  CHECK(ReshapedBy("Mod", {-3}).empty());
}

}  // namespace
}  // namespace tilebank::engine::model
