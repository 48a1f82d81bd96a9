#include "engine/ir/einsum_lowering.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilebank::engine::model {

namespace {

// An equation with one letter string per operand and the output's, each without repeated letters.
struct Equation {
  std::vector<std::string> operands;
  std::string output;
};

bool Distinct(const std::string& s) {
  std::string sorted = s;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

bool Has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// The equation's operands and output, the implicit output ("ij,jk": the letters seen once, in
// alphabetical order) made explicit; nullopt for ellipses, repeated letters and output letters no
// operand has.
std::optional<Equation> Parse(const std::string& text, int inputs) {
  std::string eq;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  Equation e;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    e.operands.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(e.operands.size()) != inputs) return std::nullopt;
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
  } else {
    std::map<char, int> seen;
    for (const auto& t : e.operands)
      for (char c : t) ++seen[c];
    for (const auto& [c, count] : seen)
      if (count == 1) e.output += c;
  }
  std::string all;
  for (const auto& t : e.operands) all += t;
  for (const auto& t : e.operands)
    if (!Distinct(t)) return std::nullopt;
  if (!Distinct(e.output)) return std::nullopt;
  for (char c : all + e.output)
    if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
  for (char c : e.output)
    if (!Has(all, c)) return std::nullopt;
  return e;
}

// Writes the nodes (and the int64 initializers their axes and shapes take) that compute an
// equation, in the graph's opset: Unsqueeze, Squeeze and ReduceSum take their axes as an input
// from opset 13, as an attribute before.
class Emitter {
 public:
  Emitter(onnx::GraphProto* graph, google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes, std::string base, int opset)
      : graph_(graph), nodes_(nodes), base_(std::move(base)), opset_(opset) {}

  // `x` (letters `from`) reordered to `to` (the same letters); `x` itself where the order is the same.
  std::string Transpose(const std::string& x, const std::string& from, const std::string& to) {
    if (from == to) return x;
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    onnx::NodeProto* n = Node("Transpose", {x});
    Ints(n, "perm", perm);
    return n->output(0);
  }
  std::string Unsqueeze(const std::string& x, const std::vector<int64_t>& axes) { return axes.empty() ? x : WithAxes("Unsqueeze", x, axes)->output(0); }
  std::string Squeeze(const std::string& x, const std::vector<int64_t>& axes) { return axes.empty() ? x : WithAxes("Squeeze", x, axes)->output(0); }
  std::string ReduceSum(const std::string& x, const std::vector<int64_t>& axes) {
    onnx::NodeProto* n = WithAxes("ReduceSum", x, axes);
    auto* keep = n->add_attribute();
    keep->set_name("keepdims");
    keep->set_type(onnx::AttributeProto::INT);
    keep->set_i(0);
    return n->output(0);
  }
  // The trailing dims from `first` on merged into one (Reshape to [0, ..., 0, -1]).
  std::string MergeTrailing(const std::string& x, int64_t first) {
    std::vector<int64_t> shape(static_cast<size_t>(first), 0);
    shape.push_back(-1);
    return Node("Reshape", {x, Constant(shape)})->output(0);
  }
  std::string Binary(const std::string& op, const std::string& a, const std::string& b) { return Node(op, {a, b})->output(0); }
  std::string Identity(const std::string& x) { return Node("Identity", {x})->output(0); }
  // The last node written now writes `name` (the Einsum's own output).
  void RenameLastOutput(const std::string& name) { nodes_->Mutable(nodes_->size() - 1)->set_output(0, name); }
  int written() const { return nodes_->size(); }

 private:
  std::string Fresh(const std::string& what) { return base_ + what + "_" + std::to_string(count_++); }
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs) {
    onnx::NodeProto* n = nodes_->Add();
    n->set_op_type(op);
    n->set_name(Fresh(op));
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(n->name() + "_output");
    return n;
  }
  // `op` over `x` with `axes`: an input from opset 13, an attribute before.
  onnx::NodeProto* WithAxes(const std::string& op, const std::string& x, const std::vector<int64_t>& axes) {
    onnx::NodeProto* n = Node(op, {x});
    if (opset_ >= 13) {
      n->add_input(Constant(axes));
    } else {
      Ints(n, "axes", axes);
    }
    return n;
  }
  std::string Constant(const std::vector<int64_t>& values) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(Fresh("constant"));
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return t->name();
  }
  static void Ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
    auto* attr = n->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) attr->add_ints(v);
  }

  onnx::GraphProto* graph_;
  google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes_;
  std::string base_;
  int opset_;
  int count_ = 0;
};

// A value and the letters of its axes, in order.
struct Term {
  std::string value, letters;
};

std::string Filter(const std::string& s, const std::string& keep_in, bool keep) {
  std::string out;
  for (char c : s)
    if (Has(keep_in, c) == keep) out += c;
  return out;
}

// `t` summed over its letters outside `needed`.
Term SumOut(Emitter& emit, const Term& t, const std::string& needed) {
  std::vector<int64_t> axes;
  for (size_t d = 0; d < t.letters.size(); ++d)
    if (!Has(needed, t.letters[d])) axes.push_back(static_cast<int64_t>(d));
  if (axes.empty()) return t;
  return {emit.ReduceSum(t.value, axes), Filter(t.letters, needed, true)};
}

// The product of `a` and `b` summed over their shared letters outside `needed` (each operand first
// summed over its own letters outside `needed`): a MatMul over [batch..., extra rows, extra
// columns, row, contracted] x [..., contracted, column], or a broadcast Mul where nothing is
// contracted. Returns the result in the order batch, rows, columns.
Term Contract(Emitter& emit, Term a, Term b, const std::string& needed) {
  a = SumOut(emit, a, needed + b.letters);
  b = SumOut(emit, b, needed + a.letters);
  std::string batch, contracted;
  for (char c : a.letters)
    if (Has(b.letters, c)) (Has(needed, c) ? batch : contracted) += c;
  const std::string rows = Filter(a.letters, b.letters, false), cols = Filter(b.letters, a.letters, false);
  const auto nb = static_cast<int64_t>(batch.size()), nr = static_cast<int64_t>(rows.size()), nc = static_cast<int64_t>(cols.size());
  auto range = [](int64_t from, int64_t count) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < count; ++k) axes.push_back(from + k);
    return axes;
  };
  if (contracted.empty()) {  // [batch, rows, 1...] * [batch, 1..., cols]
    const std::string x = emit.Unsqueeze(emit.Transpose(a.value, a.letters, batch + rows), range(nb + nr, nc));
    const std::string y = emit.Unsqueeze(emit.Transpose(b.value, b.letters, batch + cols), range(nb, nr));
    return {emit.Binary("Mul", x, y), batch + rows + cols};
  }
  // The last row and column letters are the product's; the others broadcast like batch letters.
  const std::string row = rows.empty() ? "" : rows.substr(rows.size() - 1), col = cols.empty() ? "" : cols.substr(cols.size() - 1);
  const std::string extra_rows = rows.substr(0, rows.size() - row.size()), extra_cols = cols.substr(0, cols.size() - col.size());
  const auto nk = static_cast<int64_t>(contracted.size()), ner = static_cast<int64_t>(extra_rows.size()), nec = static_cast<int64_t>(extra_cols.size());
  // a: [batch, extra rows, 1 per extra column, row or 1, contracted merged]
  std::string x = emit.Transpose(a.value, a.letters, batch + extra_rows + row + contracted);
  if (nk > 1) x = emit.MergeTrailing(x, nb + ner + static_cast<int64_t>(row.size()));
  std::vector<int64_t> x_axes = range(nb + ner, nec);
  if (row.empty()) x_axes.push_back(nb + ner + nec);
  x = emit.Unsqueeze(x, x_axes);
  // b: [batch, 1 per extra row, extra columns, contracted merged, column or 1]
  std::string y;
  if (nk > 1 && !col.empty()) {  // merged as the last axis, then swapped with the column
    y = emit.MergeTrailing(emit.Transpose(b.value, b.letters, batch + extra_cols + col + contracted), nb + nec + 1);
    std::string order, swapped;  // stand-in letters for the merged layout's axes
    for (int64_t k = 0; k < nb + nec + 2; ++k) order += static_cast<char>('a' + k);
    swapped = order.substr(0, order.size() - 2) + order.back() + order[order.size() - 2];
    y = emit.Transpose(y, order, swapped);
  } else {
    y = emit.Transpose(b.value, b.letters, batch + extra_cols + contracted + col);
    if (nk > 1) y = emit.MergeTrailing(y, nb + nec);
    if (col.empty()) y = emit.Unsqueeze(y, {nb + nec + 1});
  }
  y = emit.Unsqueeze(y, range(nb, ner));
  std::string product = emit.Binary("MatMul", x, y);
  std::vector<int64_t> squeeze;
  if (row.empty()) squeeze.push_back(nb + ner + nec);
  if (col.empty()) squeeze.push_back(nb + ner + nec + 1);
  product = emit.Squeeze(product, squeeze);
  return {product, batch + extra_rows + extra_cols + row + col};
}

// Writes the nodes that compute `eq` over the inputs of `n`, the operands contracted left to right,
// each step keeping the letters the output or a later operand needs; the last writes n's output.
void Lower(Emitter& emit, const Equation& eq, const onnx::NodeProto& n) {
  const int start = emit.written();
  Term acc{n.input(0), eq.operands[0]};
  for (size_t k = 1; k < eq.operands.size(); ++k) {
    std::string needed = eq.output;
    for (size_t later = k + 1; later < eq.operands.size(); ++later) needed += eq.operands[later];
    acc = Contract(emit, acc, {n.input(static_cast<int>(k)), eq.operands[k]}, needed);
  }
  acc = SumOut(emit, acc, eq.output);
  acc.value = emit.Transpose(acc.value, acc.letters, eq.output);
  if (emit.written() == start) emit.Identity(acc.value);  // "ij->ij"
  emit.RenameLastOutput(n.output(0));
}

// The element types the graph declares (inputs, initializers, value_info), by value name.
std::map<std::string, int> DeclaredTypes(const onnx::GraphProto& graph) {
  std::map<std::string, int> types;
  for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const auto& v : *list)
      if (v.type().has_tensor_type()) types[v.name()] = v.type().tensor_type().elem_type();
  for (const auto& t : graph.initializer()) types[t.name()] = t.data_type();
  return types;
}

// Whether MatMul, Mul and ReduceSum take this element type (not the 8- and 16-bit integers the
// Einsum kernel also takes).
bool ProductType(int type) {
  switch (type) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::DOUBLE: case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64:
      return true;
    default:
      return false;
  }
}

}  // namespace

int LowerEinsums(onnx::GraphProto* graph, int opset) {
  const std::map<std::string, int> types = DeclaredTypes(*graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int lowered = 0;
  for (auto& n : *graph->mutable_node()) {
    std::optional<Equation> eq;
    bool typed = true;  // no operand declared of a type the products do not take
    for (const auto& input : n.input())
      if (auto t = types.find(input); t != types.end() && !ProductType(t->second)) typed = false;
    if (typed && n.op_type() == "Einsum" && (n.domain().empty() || n.domain() == "ai.onnx") && n.input_size() >= 1 && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "equation") eq = Parse(a.s(), n.input_size());
    if (!eq) {
      *nodes.Add() = std::move(n);
      continue;
    }
    Emitter emit(graph, &nodes, (n.name().empty() ? n.output(0) : n.name()) + "/einsum_", opset);
    Lower(emit, *eq, n);
    ++lowered;
  }
  graph->mutable_node()->Swap(&nodes);
  return lowered;
}

}  // namespace tilebank::engine::model
