// Einsums of one letter per axis (any operand count, letter order, contracted group, implicit
// output; opsets before and from 13) become MatMul, Mul, ReduceSum and Transpose nodes and compute
// what a plain loop over the equation's letters does; the others stay Einsum nodes and still run.
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

// The equation evaluated letter by letter: every assignment of the operands' letters adds the
// product of their elements to the output element of its output letters.
std::vector<double> PlainEinsum(const std::vector<std::string>& operands, const std::string& o, const std::map<char, int64_t>& size,
                                const std::vector<const std::vector<float>*>& values) {
  std::string letters;
  for (const auto& t : operands)
    for (char c : t)
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
    double product = 1;
    for (size_t k = 0; k < operands.size(); ++k) product *= (*values[k])[offset(operands[k], at)];
    out[offset(o, at)] += product;
  }
  return out;
}

TEST_CASE("einsum lowering: equations of one letter per axis become MatMul, Mul, ReduceSum and Transpose nodes and compute the equation") {
  struct Case {
    std::vector<std::string> operands;
    std::string output;  // the letters the output has (the implicit form's too)
    std::string equation;  // empty: operands joined, "->", output
    bool lowered;
  };
  const std::map<char, int64_t> size = {{'b', 2}, {'h', 3}, {'i', 5}, {'j', 4}, {'k', 6}, {'f', 7}, {'q', 5}, {'d', 4}, {'n', 3}, {'e', 2}};
  const std::vector<Case> cases = {
      {{"ij", "jk"}, "ik", "", true},
      {{"bhid", "bhjd"}, "bhij", "", true},
      {{"hij", "jhf"}, "ihf", "", true},  // a graph attention's aggregation
      {{"bqhd", "bkhd"}, "bhqk", "", true},
      {{"ji", "kj"}, "ki", "", true},
      {{"bhqk", "bkhd"}, "bqhd", "", true},
      {{"ijk", "jkf"}, "if", "", true},             // two letters contracted
      {{"ijk", "fkj"}, "fi", "", true},             // two contracted, the column first in the second operand
      {{"bhnd", "bhd"}, "bhn", "", true},           // no column: a matrix-vector product
      {{"bhd", "bhnd"}, "bhn", "", true},           // no row
      {{"bhnd", "bhde", "bhn"}, "bhne", "", true},  // linear attention's normalised product, three operands
      {{"bn", "bne"}, "bne", "", true},             // nothing contracted: a broadcast product
      {{"ij", "jk"}, "i", "", true},                // a letter summed over one operand alone
      {{"bij", "bjkf"}, "bikf", "", true},          // two column letters
      {{"bijd", "bdk"}, "bkji", "", true},          // two row letters
      {{"ij", "jk"}, "ik", "ij,jk", true},          // implicit output
      {{"ijk"}, "kj", "", true},                    // one operand: a sum and a transpose
      {{"ij"}, "ij", "", true},                     // the identity
      {{"ii"}, "i", "", false},                     // a diagonal: left to the Einsum kernel
  };
  for (const int opset : {12, 17}) {
    for (const Case& c : cases) {
      std::string equation = c.equation;
      if (equation.empty()) {
        for (const auto& t : c.operands) equation += (equation.empty() ? "" : ",") + t;
        equation += "->" + c.output;
      }
      CAPTURE(opset);
      CAPTURE(equation);
      auto dims = [&](const std::string& s) {
        std::vector<int64_t> d;
        for (char ch : s) d.push_back(size.at(ch));
        return d;
      };
      ModelBuilder m;
      m.model.mutable_opset_import(0)->set_version(opset);
      std::vector<std::string> names;
      for (size_t k = 0; k < c.operands.size(); ++k) {
        names.push_back("x" + std::to_string(k));
        m.Input(names.back(), dims(c.operands[k]));
      }
      auto* node = m.Node("Einsum", names, {"z"});
      auto* attr = node->add_attribute();
      attr->set_name("equation");
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(equation);
      m.Output("z", dims(c.output));
      onnx::GraphProto copy = m.model.graph();
      CHECK(LowerEinsums(&copy, opset) == (c.lowered ? 1 : 0));
      TempDir dir;
      auto e = LoadModel(m.Save(dir / "einsum.onnx"), {}, nullptr);
      REQUIRE_MESSAGE(e.ok(), e.status().message());
      int einsums = 0;
      for (const Node& n : (*e)->graph().nodes) einsums += n.op_type == "Einsum";
      CHECK(einsums == (c.lowered ? 0 : 1));
      auto inputs = RandomInputs((*e)->graph(), 3);
      std::vector<const Tensor*> in;
      std::vector<const std::vector<float>*> values;
      for (const auto& t : inputs) in.push_back(&t), values.push_back(&t.data);
      std::vector<Tensor> out;
      Status ran = (*e)->Run(in, &out);
      REQUIRE_MESSAGE(ran.ok(), ran.message());
      REQUIRE(out[0].shape == dims(c.output));
      const std::vector<double> want = PlainEinsum(c.operands, c.output, size, values);
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(out[0].data[i] - want[i]));
      CHECK(worst < 1e-4);
    }
  }
}

TEST_CASE("einsum lowering: an operand declared an 8-bit integer stays on the Einsum kernel (MatMul does not take it)") {
  ModelBuilder m;
  ModelBuilder::SetShape(m.g->add_input(), "x", {3, 4}, onnx::TensorProto::UINT8);
  ModelBuilder::SetShape(m.g->add_input(), "y", {4, 5}, onnx::TensorProto::UINT8);
  auto* node = m.Node("Einsum", {"x", "y"}, {"z"});
  auto* attr = node->add_attribute();
  attr->set_name("equation");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s("ij,jk->ik");
  ModelBuilder::SetShape(m.g->add_output(), "z", {3, 5}, onnx::TensorProto::UINT8);
  onnx::GraphProto copy = m.model.graph();
  CHECK(LowerEinsums(&copy, 17) == 0);
  for (int i = 0; i < 2; ++i) copy.mutable_input(i)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  CHECK(LowerEinsums(&copy, 17) == 1);
}

}  // namespace
}  // namespace tilebank::engine::model
