#include "engine/ir/einsum_lowering.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace tilebank::engine::model {

namespace {

// The matrix-product reading of an equation: whether each input's last two axes must be swapped.
struct MatMulForm {
  bool transpose_a = false, transpose_b = false;
  size_t rank = 0;
};

std::optional<MatMulForm> AsMatMul(const std::string& equation) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return std::nullopt;
  const std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1), o = eq.substr(arrow + 2);
  for (const std::string* t : {&a, &b, &o})
    if (!std::all_of(t->begin(), t->end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); })) return std::nullopt;
  const size_t r = o.size();
  if (r < 2 || a.size() != r || b.size() != r || a.substr(0, r - 2) != o.substr(0, r - 2) || b.substr(0, r - 2) != o.substr(0, r - 2))
    return std::nullopt;
  const std::string am = a.substr(r - 2), bm = b.substr(r - 2), om = o.substr(r - 2);
  const char i = om[0], j = om[1];
  if (i == j || am[0] == am[1] || bm[0] == bm[1]) return std::nullopt;
  // A holds i and the contracted letter c, B holds c and j.
  const char c = am[0] == i ? am[1] : am[0];
  if ((am[0] != i && am[1] != i) || c == j || o.substr(0, r - 2).find(c) != std::string::npos) return std::nullopt;
  if (!((bm[0] == c && bm[1] == j) || (bm[0] == j && bm[1] == c))) return std::nullopt;
  MatMulForm form;
  form.rank = r;
  form.transpose_a = am[0] == c;
  form.transpose_b = bm[0] == j;
  return form;
}

}  // namespace

int LowerEinsums(onnx::GraphProto* graph) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int lowered = 0;
  for (auto& n : *graph->mutable_node()) {
    std::optional<MatMulForm> form;
    if (n.op_type() == "Einsum" && (n.domain().empty() || n.domain() == "ai.onnx") && n.input_size() == 2 && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "equation") form = AsMatMul(a.s());
    if (!form) {
      *nodes.Add() = std::move(n);
      continue;
    }
    std::string operands[2] = {n.input(0), n.input(1)};
    const bool transpose[2] = {form->transpose_a, form->transpose_b};
    for (int k = 0; k < 2; ++k) {
      if (!transpose[k]) continue;
      onnx::NodeProto* t = nodes.Add();
      const std::string name = (n.name().empty() ? n.output(0) : n.name()) + "/einsum_transpose_" + std::to_string(k);
      t->set_op_type("Transpose");
      t->set_name(name);
      t->add_input(operands[k]);
      t->add_output(name + "_output");
      auto* perm = t->add_attribute();
      perm->set_name("perm");
      perm->set_type(onnx::AttributeProto::INTS);
      for (size_t d = 0; d + 2 < form->rank; ++d) perm->add_ints(static_cast<int64_t>(d));
      perm->add_ints(static_cast<int64_t>(form->rank - 1));
      perm->add_ints(static_cast<int64_t>(form->rank - 2));
      operands[k] = name + "_output";
    }
    onnx::NodeProto* m = nodes.Add();
    m->set_op_type("MatMul");
    m->set_name(n.name());
    m->add_input(operands[0]);
    m->add_input(operands[1]);
    m->add_output(n.output(0));
    ++lowered;
  }
  graph->mutable_node()->Swap(&nodes);
  return lowered;
}

}  // namespace tilebank::engine::model
