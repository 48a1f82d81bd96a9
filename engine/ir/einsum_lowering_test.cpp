// Two-input Einsums that are batched products in any letter order become Transpose and MatMul
// nodes, and compute what a plain loop over the equation's letters does; the others stay Einsum
// nodes and still run.
#include "engine/ir/einsum_lowering.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "engine/runtime/model_session.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::engine::model {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

// The equation evaluated letter by letter: every assignment of the inputs' letters adds a * b to
// the output element of its output letters.
std::vector<double> PlainEinsum(const std::string& a, const std::string& b, const std::string& o, const std::map<char, int64_t>& size,
                                const std::vector<float>& x, const std::vector<float>& y) {
  std::string letters;
  for (char c : a + b)
    if (letters.find(c) == std::string::npos) letters += c;
  auto offset = [&](const std::string& operand, const std::map<char, int64_t>& at) {
    int64_t off = 0;
    for (char c : operand) off = off * size.at(c) + at.at(c);
    return off;
  };
  int64_t total = 1, out_size = 1;
  for (char c : letters) total *= size.at(c);
  for (char c : o) out_size *= size.at(c);
  std::vector<double> out(static_cast<size_t>(out_size), 0.0);
  for (int64_t flat = 0; flat < total; ++flat) {
    std::map<char, int64_t> at;
    int64_t rest = flat;
    for (auto it = letters.rbegin(); it != letters.rend(); ++it) {
      at[*it] = rest % size.at(*it);
      rest /= size.at(*it);
    }
    out[offset(o, at)] += static_cast<double>(x[offset(a, at)]) * y[offset(b, at)];
  }
  return out;
}

TEST_CASE("einsum lowering: batched products in any letter order become Transpose and MatMul and compute the equation") {
  struct Case {
    std::string a, b, o;
    bool lowered;
  };
  const std::map<char, int64_t> size = {{'b', 2}, {'h', 3}, {'i', 5}, {'j', 4}, {'k', 6}, {'f', 7}, {'q', 5}, {'d', 4}};
  const std::vector<Case> cases = {
      {"ij", "jk", "ik", true},         {"bhid", "bhjd", "bhij", true}, {"hij", "jhf", "ihf", true},  // a graph attention's aggregation
      {"bqhd", "bkhd", "bhqk", true},   {"ji", "kj", "ki", true},       {"bhqk", "bkhd", "bqhd", true},
      {"ijk", "jkf", "if", false},  // two letters contracted: left to the Einsum kernel
  };
  for (const Case& c : cases) {
    const std::string equation = c.a + "," + c.b + "->" + c.o;
    CAPTURE(equation);
    auto dims = [&](const std::string& s) {
      std::vector<int64_t> d;
      for (char ch : s) d.push_back(size.at(ch));
      return d;
    };
    ModelBuilder m;
    m.Input("x", dims(c.a));
    m.Input("y", dims(c.b));
    auto* node = m.Node("Einsum", {"x", "y"}, {"z"});
    auto* attr = node->add_attribute();
    attr->set_name("equation");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(equation);
    m.Output("z", dims(c.o));
    onnx::GraphProto copy = m.model.graph();
    CHECK(LowerEinsums(&copy) == (c.lowered ? 1 : 0));
    TempDir dir;
    auto e = LoadModel(m.Save(dir / "einsum.onnx"), {}, nullptr);
    REQUIRE_MESSAGE(e.ok(), e.status().message());
    int einsums = 0;
    for (const Node& n : (*e)->graph().nodes) einsums += n.op_type == "Einsum";
    CHECK(einsums == (c.lowered ? 0 : 1));
    auto inputs = RandomInputs((*e)->graph(), 3);
    std::vector<const Tensor*> in = {&inputs[0], &inputs[1]};
    std::vector<Tensor> out;
    Status ran = (*e)->Run(in, &out);
    REQUIRE_MESSAGE(ran.ok(), ran.message());
    REQUIRE(out[0].shape == dims(c.o));
    const std::vector<double> want = PlainEinsum(c.a, c.b, c.o, size, inputs[0].data, inputs[1].data);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(out[0].data[i] - want[i]));
    CHECK(worst < 1e-4);
  }
}

}  // namespace
}  // namespace tilebank::engine::model
