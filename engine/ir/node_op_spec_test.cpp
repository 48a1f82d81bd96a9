#include "engine/ir/node_op_spec.h"

#include <doctest/doctest.h>

namespace tilebank::engine::model {
namespace {

// x [1,8] -> Relu -> y [1,8] -> Sigmoid -> z [1,8]
Graph TwoNodes() {
  Graph g;
  for (const char* name : {"x", "y", "z"}) {
    Value v;
    v.name = name;
    v.shape = {1, 8};
    v.dtype = "float32";
    v.shape_known = true;
    g.values.push_back(v);
  }
  for (int i = 0; i < 2; ++i) {
    Node n;
    n.name = i == 0 ? "relu" : "sigmoid";
    n.op_type = i == 0 ? "Relu" : "Sigmoid";
    n.inputs = {i};
    n.outputs = {i + 1};
    g.nodes.push_back(n);
  }
  g.inputs = {0};
  g.outputs = {2};
  return g;
}

TEST_CASE("NodeOpSpecMemo: within its scope a node's description is what was computed first, other graphs and after the scope, computed anew") {
  Graph g = TwoNodes();
  Graph other = TwoNodes();
  {
    NodeOpSpecMemo memo(g);
    auto first = NodeOpSpec(g, g.nodes[1]);
    REQUIRE(first.ok());
    CHECK(first->op.op_type == "Sigmoid");
    g.values[1].shape = {1, 4};  // a change the memo's contract rules out: it shows what answers
    g.values[2].shape = {1, 4};
    auto again = NodeOpSpec(g, g.nodes[1]);
    REQUIRE(again.ok());
    CHECK(again->op.canonical.text == first->op.canonical.text);
    CHECK(again->input_values == first->input_values);
    other.values[1].shape = {1, 4};
    other.values[2].shape = {1, 4};
    auto elsewhere = NodeOpSpec(other, other.nodes[1]);  // another graph: not memoized
    REQUIRE(elsewhere.ok());
    CHECK(elsewhere->op.canonical.text != first->op.canonical.text);
    {
      NodeOpSpecMemo inner(other);  // the innermost scope answers; the outer one is back after it
      CHECK(NodeOpSpec(other, other.nodes[1])->op.canonical.text == elsewhere->op.canonical.text);
    }
    CHECK(NodeOpSpec(g, g.nodes[1])->op.canonical.text == first->op.canonical.text);
    // A failure is remembered too: the Relu's input made int64.
    g.values[0].dtype = "int64";
    auto failed = NodeOpSpec(g, g.nodes[0]);
    CHECK(!failed.ok());
    g.values[0].dtype = "float32";
    CHECK(!NodeOpSpec(g, g.nodes[0]).ok());
  }
  auto fresh = NodeOpSpec(g, g.nodes[1]);  // the scope ended: the new shapes are described
  REQUIRE(fresh.ok());
  CHECK(fresh->op.canonical.text == NodeOpSpec(other, other.nodes[1])->op.canonical.text);
  CHECK(NodeOpSpec(g, g.nodes[0]).ok());
}

}  // namespace
}  // namespace tilebank::engine::model
