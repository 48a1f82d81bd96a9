#include "repo/canonical.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace tilebank;
using json = nlohmann::json;

namespace {

json T(std::vector<int> shape, const char* type = "float", const char* format = "ND") {
  return {{"format", format}, {"shape", shape}, {"type", type}};
}

Key KeyOf(const json& op) {
  auto d = CanonicalizeOp(op);
  REQUIRE_MESSAGE(d.ok(), d.status().message());
  return d->key;
}

json Conv(json attrs, const char* op = "Conv") {
  return {{"op", op},
          {"input_desc", {T({1, 64, 56, 56}, "float", "NCHW"), T({64, 64, 3, 3}, "float", "NCHW")}},
          {"output_desc", {T({1, 64, 56, 56}, "float", "NCHW")}},
          {"attr", attrs}};
}

}  // namespace

TEST_CASE("attribute order does not change the key") {
  json a = Conv({{{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}},
                 {{"name", "strides"}, {"type", "list_int"}, {"value", {2, 2}}}});
  json b = Conv({{{"name", "strides"}, {"type", "list_int"}, {"value", {2, 2}}},
                 {{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}}});
  CHECK(KeyOf(a) == KeyOf(b));
}

TEST_CASE("default attributes spelled out or left out give the same key") {
  json bare = Conv({{{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}}});
  json spelled = Conv({{{"name", "pads"}, {"type", "list_int"}, {"value", {1, 1, 1, 1}}},
                       {{"name", "strides"}, {"type", "list_int"}, {"value", {1, 1}}},
                       {{"name", "dilations"}, {"type", "list_int"}, {"value", {1, 1}}},
                       {{"name", "group"}, {"type", "int"}, {"value", 1}},
                       {{"name", "auto_pad"}, {"type", "str"}, {"value", "NOTSET"}},
                       {{"name", "kernel_shape"}, {"type", "list_int"}, {"value", {3, 3}}}});
  CHECK(KeyOf(bare) == KeyOf(spelled));
  // Aliases, dtype spellings and format case are normalized too.
  json alias = spelled;
  alias["op"] = "Conv2D";
  alias["input_desc"][0]["type"] = "DT_FLOAT";
  alias["input_desc"][1]["format"] = "nchw";
  CHECK(KeyOf(alias) == KeyOf(bare));

  json mm = {{"op", "MatMul"}, {"input_desc", {T({128, 768}), T({768, 768})}}, {"output_desc", {T({128, 768})}}};
  json mm_spelled = mm;
  mm_spelled["attr"] = {{{"name", "transpose_a"}, {"type", "bool"}, {"value", false}}};
  mm_spelled["input_desc"][0].erase("format");  // a missing format is ND
  CHECK(KeyOf(mm) == KeyOf(mm_spelled));

  json softmax = {{"op", "SoftmaxV2"}, {"input_desc", {T({12, 128, 128})}}, {"output_desc", {T({12, 128, 128})}}};
  json softmax_axis = softmax;
  softmax_axis["op"] = "Softmax";
  softmax_axis["attr"] = {{{"name", "axis"}, {"type", "int"}, {"value", 2}}};  // -1 is axis 2 at rank 3
  CHECK(KeyOf(softmax) == KeyOf(softmax_axis));

  json ln = {{"op", "LayerNorm"}, {"input_desc", {T({128, 768}), T({768}), T({768})}}, {"output_desc", {T({128, 768})}}};
  json ln_eps = ln;
  ln_eps["op"] = "LayerNormalization";
  ln_eps["attr"] = {{{"name", "epsilon"}, {"type", "float"}, {"value", 9.99999974737875e-06}}};  // 1e-5 as float32
  CHECK(KeyOf(ln) == KeyOf(ln_eps));
}

TEST_CASE("what matters changes the key") {
  json mm = {{"op", "MatMul"}, {"input_desc", {T({128, 768}), T({768, 768})}}, {"output_desc", {T({128, 768})}}};
  json other_shape = mm;
  other_shape["input_desc"][0]["shape"] = {256, 768};
  json other_dtype = mm;
  other_dtype["input_desc"][0]["type"] = "float16";
  json transposed = mm;
  transposed["attr"] = {{{"name", "transpose_b"}, {"type", "bool"}, {"value", true}}};
  CHECK(KeyOf(mm) != KeyOf(other_shape));
  CHECK(KeyOf(mm) != KeyOf(other_dtype));
  CHECK(KeyOf(mm) != KeyOf(transposed));
  json strided = Conv({{{"name", "strides"}, {"type", "list_int"}, {"value", {2, 2}}}});
  CHECK(KeyOf(strided) != KeyOf(Conv(json::array())));
}

TEST_CASE("bad operator descriptions are refused with the field named") {
  auto message = [](const json& op) {
    auto d = CanonicalizeOp(op);
    REQUIRE_FALSE(d.ok());
    return d.status().message();
  };
  CHECK(message(json{{"input_desc", json::array()}}).find("\"op\"") != std::string::npos);
  CHECK(message(json{{"op", "Add"}}).find("input_desc") != std::string::npos);
  CHECK(message(json{{"op", "Add"}, {"input_desc", {T({2, -5})}}}).find("shape") != std::string::npos);
  CHECK(message(json{{"op", "Add"}, {"input_desc", {T({2}, "complex7")}}}).find("complex7") != std::string::npos);
  json bad_axis = {{"op", "Softmax"}, {"input_desc", {T({4, 4})}}, {"attr", {{{"name", "axis"}, {"value", 5}}}}};
  CHECK(message(bad_axis).find("out of range") != std::string::npos);
  json twice = Conv({{{"name", "group"}, {"value", 1}}, {{"name", "group"}, {"value", 2}}});
  CHECK(message(twice).find("twice") != std::string::npos);
}

namespace {

json Node(const std::string& name, const std::string& op, std::vector<std::string> inputs, int width = 64) {
  return {{"name", name}, {"op", op}, {"inputs", inputs}, {"input_desc", json::array({T({8, width})})},
          {"output_desc", json::array({T({8, width})})}};
}

Key GraphKey(const json& nodes) {
  auto d = CanonicalizeGraph(json{{"nodes", nodes}});
  REQUIRE_MESSAGE(d.ok(), d.status().message());
  return d->key;
}

}  // namespace

TEST_CASE("a subgraph's key depends on neither node names nor listing order") {
  json a = {Node("a", "Relu", {"x"}), Node("b", "Sigmoid", {"x"}), Node("c", "Add", {"a", "b"}), Node("d", "Tanh", {"c"})};
  json b = {Node("tanh", "Tanh", {"sum"}), Node("sum", "Add", {"relu", "sig"}), Node("sig", "Sigmoid", {"in0"}),
            Node("relu", "Relu", {"in0"})};
  CHECK(GraphKey(a) == GraphKey(b));
  // Swapping the operands of Add is another graph (operand order matters).
  json swapped = {Node("a", "Relu", {"x"}), Node("b", "Sigmoid", {"x"}), Node("c", "Add", {"b", "a"}), Node("d", "Tanh", {"c"})};
  CHECK(GraphKey(a) != GraphKey(swapped));
  // Two graph inputs instead of one shared input is another graph.
  json unshared = {Node("a", "Relu", {"x"}), Node("b", "Sigmoid", {"y"}), Node("c", "Add", {"a", "b"}), Node("d", "Tanh", {"c"})};
  CHECK(GraphKey(a) != GraphKey(unshared));
  // Symmetric branches in either listing order.
  json sym1 = {Node("p", "Relu", {"x"}), Node("q", "Relu", {"x"}), Node("r", "Add", {"p", "q"})};
  json sym2 = {Node("r", "Add", {"q", "p"}), Node("q", "Relu", {"x"}), Node("p", "Relu", {"x"})};
  CHECK(GraphKey(sym1) == GraphKey(sym2));
  auto d = CanonicalizeGraph(json{{"nodes", a}});
  CHECK(d->op_type == "Add+Relu+Sigmoid+Tanh");
  CHECK(d->kind == EntryKind::kGraph);
}

TEST_CASE("bad subgraphs are refused") {
  CHECK_FALSE(CanonicalizeGraph(json{{"nodes", json::array()}}).ok());
  json cycle = {Node("a", "Relu", {"b"}), Node("b", "Relu", {"a"})};
  auto c = CanonicalizeGraph(json{{"nodes", cycle}});
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("cycle") != std::string::npos);
  json dup = {Node("a", "Relu", {"x"}), Node("a", "Relu", {"x"})};
  CHECK_FALSE(CanonicalizeGraph(json{{"nodes", dup}}).ok());
}

TEST_CASE("gradient problems keep backward order and normalize sizes") {
  json a = {{"gradients", {{{"shape", {10, 20}}, {"type", "float"}}, {{"numel", 5}, {"type", "fp32"}}}}, {"world_size", 8}};
  json b = {{"gradients", {{{"numel", 200}, {"type", "float32"}}, {{"shape", {5}}, {"type", "float32"}}}}, {"world_size", 8}};
  json reversed = {{"gradients", {{{"numel", 5}, {"type", "float32"}}, {{"numel", 200}, {"type", "float32"}}}}, {"world_size", 8}};
  CHECK(CanonicalizeGrad(a)->key == CanonicalizeGrad(b)->key);
  CHECK(CanonicalizeGrad(a)->key != CanonicalizeGrad(reversed)->key);
  CHECK_FALSE(CanonicalizeGrad(json{{"gradients", json::array()}, {"world_size", 8}}).ok());
  CHECK_FALSE(CanonicalizeGrad(json{{"gradients", {{{"numel", 5}, {"type", "float32"}}}}}).ok());
}

TEST_CASE("a stored canonical descriptor canonicalizes to itself") {
  auto op = CanonicalizeOp(Conv({{{"name", "strides"}, {"type", "list_int"}, {"value", {2, 2}}}}));
  CHECK(Recanonicalize(EntryKind::kOp, op->text)->text == op->text);
  json nodes = {Node("a", "Relu", {"x"}), Node("b", "Sigmoid", {"x"}), Node("c", "Add", {"a", "b"})};
  auto graph = CanonicalizeGraph(json{{"nodes", nodes}});
  CHECK(Recanonicalize(EntryKind::kGraph, graph->text)->text == graph->text);
  auto grad = CanonicalizeGrad(json{{"gradients", {{{"numel", 5}, {"type", "fp16"}}}}, {"world_size", 2}});
  CHECK(Recanonicalize(EntryKind::kGrad, grad->text)->text == grad->text);
  CHECK_FALSE(Recanonicalize(EntryKind::kOp, "{\"op\":\"Add\"}").ok());
}

TEST_CASE("the shape class forgets sizes but keeps ranks") {
  json a = {{"op", "MatMul"}, {"input_desc", {T({128, 768}), T({768, 768})}}, {"output_desc", {T({128, 768})}}};
  json b = {{"op", "MatMul"}, {"input_desc", {T({256, 768}), T({768, 64})}}, {"output_desc", {T({256, 64})}}};
  json c = {{"op", "MatMul"}, {"input_desc", {T({2, 256, 768}), T({768, 64})}}, {"output_desc", {T({2, 256, 64})}}};
  CHECK(ShapeClassOf(CanonicalizeOp(a)->text) == ShapeClassOf(CanonicalizeOp(b)->text));
  CHECK(ShapeClassOf(CanonicalizeOp(a)->text) != ShapeClassOf(CanonicalizeOp(c)->text));
}
