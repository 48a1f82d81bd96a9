#include "engine/ir/einsum_lowering.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace tilebank::engine::model {

namespace {

// The batched-product reading of a two-input equation: each operand transposed to [batch..., rows,
// contracted] and [batch..., contracted, columns], their MatMul [batch..., rows, columns] transposed
// to the output's order. An empty permutation is the identity (no Transpose).
struct ProductForm {
  std::vector<int64_t> perm_a, perm_b, perm_out;
};

bool Distinct(const std::string& s) {
  std::string sorted = s;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

std::vector<int64_t> IdentityOrEmpty(std::vector<int64_t> perm) {
  for (size_t d = 0; d < perm.size(); ++d)
    if (perm[d] != static_cast<int64_t>(d)) return perm;
  return {};
}

std::optional<ProductForm> AsProduct(const std::string& equation) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return std::nullopt;
  const std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1), o = eq.substr(arrow + 2);
  for (const std::string* t : {&a, &b, &o})
    if (!std::all_of(t->begin(), t->end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }) || !Distinct(*t)) return std::nullopt;
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch, rows, cols, contracted;
  for (char c : o) {
    if (in(a, c) && in(b, c)) batch += c;
    else if (in(a, c)) rows += c;
    else if (in(b, c)) cols += c;
    else return std::nullopt;  // an output letter no input has
  }
  for (char c : a)
    if (!in(o, c)) {
      if (!in(b, c)) return std::nullopt;  // summed over one operand alone
      contracted += c;
    }
  for (char c : b)
    if (!in(o, c) && !in(a, c)) return std::nullopt;
  if (rows.size() != 1 || cols.size() != 1 || contracted.size() != 1) return std::nullopt;
  ProductForm form;
  const std::string order_a = batch + rows + contracted, order_b = batch + contracted + cols, product = batch + rows + cols;
  std::vector<int64_t> pa, pb, po;
  for (char c : order_a) pa.push_back(static_cast<int64_t>(a.find(c)));
  for (char c : order_b) pb.push_back(static_cast<int64_t>(b.find(c)));
  for (char c : o) po.push_back(static_cast<int64_t>(product.find(c)));
  form.perm_a = IdentityOrEmpty(pa), form.perm_b = IdentityOrEmpty(pb), form.perm_out = IdentityOrEmpty(po);
  return form;
}

onnx::NodeProto* AddTranspose(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes, const std::string& name, const std::string& input,
                              const std::string& output, const std::vector<int64_t>& perm) {
  onnx::NodeProto* t = nodes->Add();
  t->set_op_type("Transpose");
  t->set_name(name);
  t->add_input(input);
  t->add_output(output);
  auto* attr = t->add_attribute();
  attr->set_name("perm");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t d : perm) attr->add_ints(d);
  return t;
}

}  // namespace

int LowerEinsums(onnx::GraphProto* graph) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int lowered = 0;
  for (auto& n : *graph->mutable_node()) {
    std::optional<ProductForm> form;
    if (n.op_type() == "Einsum" && (n.domain().empty() || n.domain() == "ai.onnx") && n.input_size() == 2 && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "equation") form = AsProduct(a.s());
    if (!form) {
      *nodes.Add() = std::move(n);
      continue;
    }
    const std::string base = (n.name().empty() ? n.output(0) : n.name()) + "/einsum_";
    std::string operands[2] = {n.input(0), n.input(1)};
    const std::vector<int64_t>* perms[2] = {&form->perm_a, &form->perm_b};
    for (int k = 0; k < 2; ++k) {
      if (perms[k]->empty()) continue;
      const std::string name = base + "transpose_" + std::to_string(k);
      AddTranspose(&nodes, name, operands[k], name + "_output", *perms[k]);
      operands[k] = name + "_output";
    }
    onnx::NodeProto* m = nodes.Add();
    m->set_op_type("MatMul");
    m->set_name(n.name());
    m->add_input(operands[0]);
    m->add_input(operands[1]);
    if (form->perm_out.empty()) {
      m->add_output(n.output(0));
    } else {
      m->add_output(base + "product");
      AddTranspose(&nodes, base + "transpose_out", base + "product", n.output(0), form->perm_out);
    }
    ++lowered;
  }
  graph->mutable_node()->Swap(&nodes);
  return lowered;
}

}  // namespace tilebank::engine::model
