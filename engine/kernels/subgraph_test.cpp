// SubgraphRunner run again and again, as a Loop runs its body: names resolved once still find an
// earlier node's value before an enclosing scope's of the same name, node outputs kept between runs
// take each run's shapes, and a kernel is made again when an input's dtype changes.
#include <doctest/doctest.h>

#include "engine/kernels/subgraph.h"

namespace tilebank::engine::kernels {
namespace {

SubgraphNode BodyNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs, Attrs attrs = Attrs()) {
  SubgraphNode n;
  n.info.op_type = op;
  n.info.node_name = outputs.front();
  n.info.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

TEST_CASE("SubgraphRunner: each run's values, shapes and dtypes, an earlier node's value before an enclosing scope's") {
  // y = Concat(Tanh(x), k), t = Neg(shadow), shadow = Sigmoid(x), s = Abs(y)[0:n] + shadow: the
  // Neg reads the enclosing scope's "shadow" (no node has computed it yet), the Add the node's.
  Subgraph g;
  g.name = "body";
  g.inputs = {"x"};
  g.outputs = {"y", "s", "t"};
  g.constants["k"] = TypedTensor::Of<float>({1}, {5.f});
  g.nodes.push_back(BodyNode("Tanh", {"x"}, {"h"}));
  g.nodes.push_back(BodyNode("Concat", {"h", "k"}, {"y"}, Attrs(nlohmann::json{{"axis", 0}})));
  g.nodes.push_back(BodyNode("Neg", {"shadow"}, {"t"}));
  g.nodes.push_back(BodyNode("Sigmoid", {"x"}, {"shadow"}));
  g.nodes.push_back(BodyNode("Abs", {"y"}, {"a"}));
  g.nodes.push_back(BodyNode("Slice", {"a", "start", "end"}, {"head"}));
  g.nodes.push_back(BodyNode("Add", {"head", "shadow"}, {"s"}));
  SubgraphRunner runner(g, 17);
  const TypedTensor outer_shadow = TypedTensor::Of<float>({1}, {2.f});
  for (int64_t n : {3, 1, 4, 2}) {
    CAPTURE(n);
    std::vector<float> xs;
    for (int64_t i = 0; i < n; ++i) xs.push_back(0.25f * static_cast<float>(i) - 0.4f);
    const TypedTensor x = TypedTensor::Of<float>({n}, xs);
    const TypedTensor start = TypedTensor::Of<int64_t>({1}, {0}), end = TypedTensor::Of<int64_t>({1}, {n});
    const Scope outer = {{"shadow", &outer_shadow}, {"start", &start}, {"end", &end}};
    std::vector<TypedTensor> out;
    REQUIRE(runner.Run({&x}, outer, &out).ok());
    REQUIRE(out.size() == 3);
    REQUIRE(out[0].shape == std::vector<int64_t>{n + 1});
    REQUIRE(out[1].shape == std::vector<int64_t>{n});
    for (int64_t i = 0; i < n; ++i) {
      CHECK(out[0].data<float>()[i] == doctest::Approx(std::tanh(xs[i])).epsilon(1e-6));
      const double sigmoid = 1 / (1 + std::exp(-static_cast<double>(xs[i])));
      CHECK(out[1].data<float>()[i] == doctest::Approx(std::abs(std::tanh(xs[i])) + sigmoid).epsilon(1e-5));
    }
    CHECK(out[0].data<float>()[n] == 5.f);
    REQUIRE(out[2].shape == std::vector<int64_t>{1});
    CHECK(out[2].data<float>()[0] == -2.f);  // Neg read the enclosing scope's "shadow"
  }
  // The same runner with a float64 input: its kernels are made again for the new dtype.
  const TypedTensor x = TypedTensor::Of<double>({2}, {0.5, -0.5});
  Subgraph typed;
  typed.name = "typed";
  typed.inputs = {"x"};
  typed.outputs = {"y"};
  typed.nodes.push_back(BodyNode("Tanh", {"x"}, {"y"}));
  SubgraphRunner typed_runner(typed, 17);
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat32}) {
    const TypedTensor in = dtype == DType::kFloat64 ? x : TypedTensor::Of<float>({2}, {0.5f, -0.5f});
    std::vector<TypedTensor> out;
    REQUIRE(typed_runner.Run({&in}, {}, &out).ok());
    REQUIRE(out[0].dtype == dtype);
    CHECK(out[0].At(0) == doctest::Approx(std::tanh(0.5)).epsilon(1e-6));
  }
  // Outputs that no node computes (a formal input, a constant, an enclosing scope's value), and an
  // optional input left out (Clip without its min).
  Subgraph passing;
  passing.name = "passing";
  passing.inputs = {"x"};
  passing.outputs = {"x", "k", "v", "c"};
  passing.constants["k"] = TypedTensor::Of<float>({1}, {7.f});
  passing.constants["hi"] = TypedTensor::Of<float>({}, {0.5f});
  passing.nodes.push_back(BodyNode("Clip", {"x", "", "hi"}, {"c"}));
  SubgraphRunner passing_runner(passing, 17);
  const TypedTensor v = TypedTensor::Of<float>({1}, {3.f}), px = TypedTensor::Of<float>({2}, {-4.f, 4.f});
  for (int run = 0; run < 2; ++run) {
    std::vector<TypedTensor> out;
    REQUIRE(passing_runner.Run({&px}, {{"v", &v}}, &out).ok());
    REQUIRE(out.size() == 4);
    CHECK(out[0].At(1) == 4.0);
    CHECK(out[1].At(0) == 7.0);
    CHECK(out[2].At(0) == 3.0);
    CHECK(out[3].At(0) == -4.0);
    CHECK(out[3].At(1) == 0.5);
  }
  // A name no scope has is refused, naming the node and the name.
  Subgraph missing;
  missing.name = "missing";
  missing.outputs = {"y"};
  missing.nodes.push_back(BodyNode("Neg", {"nowhere"}, {"y"}));
  SubgraphRunner missing_runner(missing, 17);
  std::vector<TypedTensor> out;
  const Status s = missing_runner.Run({}, {}, &out);
  REQUIRE(!s.ok());
  CHECK_MESSAGE(s.message().find("input 'nowhere' is in no enclosing scope") != std::string::npos, s.message());
}

}  // namespace
}  // namespace tilebank::engine::kernels
