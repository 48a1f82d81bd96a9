// With the propagators, ONNX's shape inference follows a Shape through Div, Mod, Max, Min and
// Identity into a Reshape's target, in one pass; a negative value or a zero divisor stays unknown.
// And through torch.onnx's computed pads, ranges, slices and expand targets (Swin-T's windows).
#include "engine/ir/shape_data_propagators.h"

#include <doctest/doctest.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <map>

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

// A 0-D int64 initializer.
void Scalar(ModelBuilder& b, const std::string& name, int64_t value) {
  auto* t = b.g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
}

// A ConstantOfShape node filling int64 `value`.
void FilledWith(ModelBuilder& b, const std::string& shape, const std::string& out, int64_t value) {
  auto* a = b.Node("ConstantOfShape", {shape}, {out})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(value);
}

// The shapes ONNX's inference gives the model's outputs (-1: an unknown dimension; empty: none).
std::map<std::string, std::vector<int64_t>> InferredOutputs(ModelBuilder& b) {
  RegisterShapeDataPropagators();
  onnx::shape_inference::InferShapes(b.model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions{true, 0, true});
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& out : b.model.graph().output()) {
    auto& shape = shapes[out.name()];
    if (out.type().tensor_type().has_shape())
      for (const auto& d : out.type().tensor_type().shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return shapes;
}

TEST_CASE("shape data propagators: torch.onnx's computed pads reach a Pad's output shape in one pass") {
  // F.pad(x, (0, 0, 0, 7 - W, 0, 7 - H)) on x [1, H=5, W=6, 3], as torch.onnx writes it.
  ModelBuilder b;
  b.Input("x", {1, 5, 6, 3});
  b.Node("Shape", {"x"}, {"s"});
  b.Ints("i1", {1});
  b.Ints("i2", {2});
  b.Ints("seven", {7});
  b.Ints("zero", {0});
  b.Ints("eight", {8});
  b.Node("Gather", {"s", "i2"}, {"w"});
  b.Node("Gather", {"s", "i1"}, {"h"});
  b.Node("Sub", {"seven", "w"}, {"pw"});
  b.Node("Sub", {"seven", "h"}, {"ph"});
  b.IntAttr(b.Node("Concat", {"zero", "zero", "zero", "pw", "zero", "ph"}, {"given"}), "axis", 0);
  b.Node("Shape", {"given"}, {"given_n"});
  b.Node("Sub", {"eight", "given_n"}, {"rest_n"});
  FilledWith(b, "rest_n", "rest", 0);
  b.IntAttr(b.Node("Concat", {"given", "rest"}, {"all"}), "axis", 0);
  b.Ints("pairs", {-1, 2});
  b.Node("Reshape", {"all", "pairs"}, {"as_pairs"});
  b.Ints("start", {-1});
  b.Ints("end", {-9223372036854775807});
  b.Ints("axes", {0});
  b.Ints("step", {-1});
  b.Node("Slice", {"as_pairs", "start", "end", "axes", "step"}, {"reversed"});
  b.IntsAttr(b.Node("Transpose", {"reversed"}, {"by_side"}), "perm", {1, 0});
  b.Ints("flat", {-1});
  b.Node("Reshape", {"by_side", "flat"}, {"pads_flat"});
  b.IntAttr(b.Node("Cast", {"pads_flat"}, {"pads"}), "to", onnx::TensorProto::INT64);
  b.Node("Pad", {"x", "pads"}, {"y"});
  b.g->add_output()->set_name("y");
  CHECK(InferredOutputs(b)["y"] == std::vector<int64_t>{1, 7, 7, 3});
}

TEST_CASE("shape data propagators: a computed Range, Slice and Expand target give their outputs' shapes") {
  ModelBuilder b;
  b.Input("x", {1, 5, 6, 3});
  b.Node("Shape", {"x"}, {"s"});
  Scalar(b, "zero", 0);
  Scalar(b, "one", 1);
  Scalar(b, "axis_w", 2);
  b.Node("Gather", {"s", "axis_w"}, {"w"});  // 0-D: 6
  b.IntAttr(b.Node("Cast", {"w"}, {"limit"}), "to", onnx::TensorProto::INT64);
  b.Node("Range", {"zero", "limit", "one"}, {"r"});
  b.g->add_output()->set_name("r");
  b.Ints("i2", {2});
  b.Ints("two", {2});
  b.Ints("begin", {0});
  b.Ints("axes", {2});
  b.Node("Gather", {"s", "i2"}, {"w1"});
  b.Node("Sub", {"w1", "two"}, {"end"});  // [4]
  b.Node("Slice", {"x", "begin", "end", "axes"}, {"sliced"});
  b.g->add_output()->set_name("sliced");
  // torch.onnx's expand target: Where(Equal(s, -1s), ones, s).
  b.Node("Shape", {"s"}, {"rank"});
  FilledWith(b, "rank", "ones", 1);
  b.Ints("minus", {-1});
  b.Node("Mul", {"ones", "minus"}, {"minus_ones"});
  b.Node("Equal", {"s", "minus_ones"}, {"is_minus"});
  b.Node("Where", {"is_minus", "ones", "s"}, {"target"});
  b.Floats("v", {1}, {2.5f});
  b.Node("Expand", {"v", "target"}, {"expanded"});
  b.g->add_output()->set_name("expanded");
  auto shapes = InferredOutputs(b);
  CHECK(shapes["r"] == std::vector<int64_t>{6});
  CHECK(shapes["sliced"] == std::vector<int64_t>{1, 5, 4, 3});
  CHECK(shapes["expanded"] == std::vector<int64_t>{1, 5, 6, 3});
}

TEST_CASE("shape data propagators: a float Range to a computed limit, a Tile by computed repeats (an anchor grid) and a TopK of a computed k give their outputs' shapes") {
  ModelBuilder b;
  b.Input("x", {1, 8, 5, 7});
  b.Node("Shape", {"x"}, {"s"});
  Scalar(b, "axis_w", 3);
  b.Node("Gather", {"s", "axis_w"}, {"w"});  // 0-D: 7
  b.IntAttr(b.Node("Cast", {"w"}, {"limit"}), "to", onnx::TensorProto::FLOAT);
  b.Floats("start", {}, {0.f});
  b.Floats("half", {}, {0.5f});
  b.Node("Range", {"start", "limit", "half"}, {"r"});  // 0, 0.5, ..., 6.5: 14
  b.g->add_output()->set_name("r");
  // 7 / 0.7f is 10.0000002 in double, as the Range kernel and ONNX Runtime divide: 11 elements
  // (float32's own division would round it to 10).
  b.Floats("tenths", {}, {0.7f});
  b.Node("Range", {"start", "limit", "tenths"}, {"r11"});
  b.g->add_output()->set_name("r11");
  b.Floats("cell", {1, 4}, {0.f, 0.f, 1.f, 1.f});
  Scalar(b, "axis_h", 2);
  b.Node("Gather", {"s", "axis_h"}, {"h"});
  b.Node("Mul", {"h", "w"}, {"cells"});  // 35
  b.Ints("axes0", {0});
  b.Node("Unsqueeze", {"cells", "axes0"}, {"cells_1"});
  b.Ints("one", {1});
  b.IntAttr(b.Node("Concat", {"cells_1", "one"}, {"repeats"}), "axis", 0);
  b.Node("Tile", {"cell", "repeats"}, {"grid"});
  b.g->add_output()->set_name("grid");
  // torch.topk(x, x.size(-1)): k from the shape, both outputs [1, 8, 5, 7].
  b.Ints("last", {3});
  b.Node("Gather", {"s", "last"}, {"k"});
  b.IntAttr(b.Node("TopK", {"x", "k"}, {"values", "indices"}), "axis", -1);
  b.g->add_output()->set_name("values");
  b.g->add_output()->set_name("indices");
  auto shapes = InferredOutputs(b);
  CHECK(shapes["values"] == std::vector<int64_t>{1, 8, 5, 7});
  CHECK(shapes["indices"] == std::vector<int64_t>{1, 8, 5, 7});
  CHECK(shapes["r"] == std::vector<int64_t>{14});
  CHECK(shapes["r11"] == std::vector<int64_t>{11});
  CHECK(shapes["grid"] == std::vector<int64_t>{35, 4});
}

TEST_CASE("shape data propagators: a Resize to computed sizes (torch.onnx's interpolate to another tensor's size) has a known shape in one pass") {
  ModelBuilder b;
  b.Input("x", {1, 8, 4, 5});
  b.Input("level", {1, 3, 8, 10});
  // sizes = Concat(Shape(x)[:2], Shape(level)[2:]), as torch.onnx writes F.interpolate(x, size=level.shape[2:]).
  b.Node("Shape", {"x"}, {"sx"});
  b.Node("Shape", {"level"}, {"sl"});
  b.Ints("zero", {0});
  b.Ints("two", {2});
  b.Ints("four", {4});
  b.Node("Slice", {"sx", "zero", "two"}, {"nc"});
  b.Node("Slice", {"sl", "two", "four"}, {"hw"});
  b.IntAttr(b.Node("Concat", {"nc", "hw"}, {"sizes"}), "axis", 0);
  b.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  b.g->add_output()->set_name("y");
  auto shapes = InferredOutputs(b);
  CHECK(shapes["y"] == std::vector<int64_t>{1, 8, 8, 10});
}

TEST_CASE("shape data propagators: OneHot with a constant depth (a Constant node, as torch.onnx writes it) has a known shape") {
  ModelBuilder b;
  ModelBuilder::SetShape(b.g->add_input(), "i", {2, 5, 7}, onnx::TensorProto::INT64);
  auto* depth = b.Node("Constant", {}, {"depth"})->add_attribute();
  depth->set_name("value");
  depth->set_type(onnx::AttributeProto::TENSOR);
  depth->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  depth->mutable_t()->add_int64_data(10);
  b.Ints("values", {0, 1});
  b.Node("OneHot", {"i", "depth", "values"}, {"last"});
  b.g->add_output()->set_name("last");
  b.IntAttr(b.Node("OneHot", {"i", "depth", "values"}, {"second"}), "axis", 1);
  b.g->add_output()->set_name("second");
  auto shapes = InferredOutputs(b);
  CHECK(shapes["last"] == std::vector<int64_t>{2, 5, 7, 10});
  CHECK(shapes["second"] == std::vector<int64_t>{2, 10, 5, 7});
}

TEST_CASE("shape data propagators: a Concat whose first values are none (an empty Slice of a Shape) still propagates") {
  ModelBuilder b;
  b.Input("x", {2, 3, 4});
  b.Node("Shape", {"x"}, {"s"});
  b.Ints("zero", {0});
  b.Node("Slice", {"s", "zero", "zero"}, {"none"});  // []
  b.IntAttr(b.Node("Concat", {"none", "s"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.g->add_output()->set_name("y");
  CHECK(InferredOutputs(b)["y"] == std::vector<int64_t>{2, 3, 4});
}

TEST_CASE("shape data propagators: a Slice with a negative step clamps its start into the axis") {
  ModelBuilder b;
  b.Input("x", {3, 4, 5, 6});
  b.Node("Shape", {"x"}, {"s"});
  b.Ints("start", {-5});  // -5 + 4 = -1: clamped to 0, so the slice takes the first value
  b.Ints("end", {-9223372036854775807});
  b.Ints("axes", {0});
  b.Ints("step", {-1});
  b.Node("Slice", {"s", "start", "end", "axes", "step"}, {"first"});
  FilledWith(b, "first", "y", 0);
  b.g->add_output()->set_name("y");
  CHECK(InferredOutputs(b)["y"] == std::vector<int64_t>{3});
}

TEST_CASE("shape data propagators: values of two axes do not reach the elementwise propagators") {
  // Shape data reshaped to [2, 2] plus a [2]: broadcast over rows, which a flat list would not
  // do (libonnx's Add failed the whole inference over it).
  ModelBuilder b;
  b.Input("x", {2, 2, 3, 4});
  b.Node("Shape", {"x"}, {"s"});
  b.Ints("square", {2, 2});
  b.Node("Reshape", {"s", "square"}, {"grid"});
  b.Ints("row", {1, 1});
  b.Node("Add", {"grid", "row"}, {"sum"});
  b.g->add_output()->set_name("sum");
  std::map<std::string, std::vector<int64_t>> shapes;
  CHECK_NOTHROW(shapes = InferredOutputs(b));
  CHECK(shapes["sum"] == std::vector<int64_t>{2, 2});
}

}  // namespace
}  // namespace tilebank::engine::model
