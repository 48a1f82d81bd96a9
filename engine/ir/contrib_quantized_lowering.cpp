#include "engine/ir/contrib_quantized_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/tensor_proto.h"

namespace tilebank::engine::model {
namespace {

constexpr const char* kContribDomain = "com.microsoft";

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttribute(n, name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

std::string Input(const onnx::NodeProto& n, int i) { return i < n.input_size() ? n.input(i) : ""; }

// What the lowering reads of the model around a node, and the initializers it adds.
struct ModelFacts {
  int64_t opset = 0;                                          // the default domain's: the nodes written are read at it
  std::map<std::string, const onnx::TensorProto*> initializers;
  std::map<std::string, int> rank;                            // of the graph's inputs and value_info, where declared
  std::vector<onnx::TensorProto> added;                       // initializers the lowering writes
};

// Writes the replacement nodes of one contrib node, named after it.
class Lowering {
 public:
  Lowering(const onnx::NodeProto& node, ModelFacts* facts, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out)
      : node_(node), facts_(facts), out_(out), prefix_((node.name().empty() ? node.output(0) : node.name()) + "/lowered") {}
  ModelFacts& facts() { return *facts_; }

  // An ONNX-domain node of `op_type`; returns it for attributes.
  onnx::NodeProto* Add(const std::string& op_type, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    onnx::NodeProto* n = out_->Add();
    n->set_op_type(op_type);
    n->set_name(prefix_ + "/" + op_type + "_" + std::to_string(count_++));
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return n;
  }
  // A fresh value name.
  std::string Value(const std::string& what) { return prefix_ + "/" + what + "_" + std::to_string(count_++); }
  // DequantizeLinear(x, scale[, zero point]) into a fresh float value.
  std::string Dequantize(const std::string& x, const std::string& scale, const std::string& zero_point, int64_t axis = 1) {
    const std::string y = Value("float");
    std::vector<std::string> inputs = {x, scale};
    if (!zero_point.empty()) inputs.push_back(zero_point);
    onnx::NodeProto* n = Add("DequantizeLinear", inputs, {y});
    // Before opset 13 DequantizeLinear is per tensor and has no axis (a scale of more than one value
    // is refused by ONNX's checker then).
    if (axis != 1 && facts_->opset >= 13) SetInt(n, "axis", axis);
    return y;
  }
  // QuantizeLinear(x, scale[, zero point]) into the contrib node's output `k`. Without an output zero
  // point the contrib ops keep their input's type, where QuantizeLinear would write uint8: a zero of
  // `input_zero_point`'s type stands in for it when that one is an initializer.
  void QuantizeInto(const std::string& x, const std::string& scale, const std::string& zero_point, const std::string& input_zero_point = "", int k = 0) {
    std::vector<std::string> inputs = {x, scale};
    if (!zero_point.empty()) inputs.push_back(zero_point);
    else if (auto it = facts_->initializers.find(input_zero_point); it != facts_->initializers.end()) {
      onnx::TensorProto zero;
      zero.set_name(prefix_ + "/zero_point");
      zero.set_data_type(it->second->data_type());
      zero.set_raw_data(std::string(1, '\0'));
      facts_->added.push_back(zero);
      inputs.push_back(zero.name());
    }
    Add("QuantizeLinear", inputs, {node_.output(k)});
  }
  // A float32 initializer of `values` (shape [n], or a scalar for one value).
  std::string FloatConstant(const std::string& what, const std::vector<float>& values) {
    onnx::TensorProto t;
    t.set_name(prefix_ + "/" + what);
    t.set_data_type(onnx::TensorProto::FLOAT);
    if (values.size() != 1) t.add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) t.add_float_data(v);
    facts_->added.push_back(t);
    return t.name();
  }
  // The contrib node's attributes but `skipped`, copied onto `n`.
  void CopyAttributes(onnx::NodeProto* n, const std::vector<std::string>& skipped) {
    for (const auto& a : node_.attribute())
      if (std::find(skipped.begin(), skipped.end(), a.name()) == skipped.end()) *n->add_attribute() = a;
  }
  static void SetInt(onnx::NodeProto* n, const std::string& name, int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void SetInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }

 private:
  const onnx::NodeProto& node_;
  ModelFacts* facts_;
  google::protobuf::RepeatedPtrField<onnx::NodeProto>* out_;
  std::string prefix_;
  int count_ = 0;
};

// X, X_scale, X_zero_point, Y_scale, Y_zero_point -> Y: one float op between.
bool LowerUnary(const onnx::NodeProto& n, Lowering* l, const std::string& op_type, const std::vector<std::string>& skipped_attributes) {
  if (n.input_size() < 4 || n.output_size() != 1) return false;
  const std::string x = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string y = l->Value(op_type);
  onnx::NodeProto* op = l->Add(op_type, {x}, {y});
  l->CopyAttributes(op, skipped_attributes);
  // A Softmax reads its axis explicitly: below opset 13 a missing one is 1, QLinearSoftmax's is -1.
  if (op_type == "Softmax" && !FindAttribute(n, "axis")) Lowering::SetInt(op, "axis", -1);
  l->QuantizeInto(y, n.input(3), Input(n, 4), Input(n, 2));
  return true;
}

// A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point -> C.
bool LowerBinary(const onnx::NodeProto& n, Lowering* l, const std::string& op_type) {
  if (n.input_size() < 7 || n.output_size() != 1) return false;
  const std::string a = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string b = l->Dequantize(n.input(3), n.input(4), Input(n, 5));
  const std::string c = l->Value(op_type);
  l->Add(op_type, {a, b}, {c});
  l->QuantizeInto(c, n.input(6), Input(n, 7), Input(n, 2));
  return true;
}

bool LowerGlobalAveragePool(const onnx::NodeProto& n, Lowering* l) {
  if (IntAttribute(n, "channels_last", 0) == 0) return LowerUnary(n, l, "GlobalAveragePool", {"channels_last"});
  // [N, spatial..., C]: the mean over every axis but the first and last, when the graph declares
  // the input's rank.
  auto rank = l->facts().rank.find(Input(n, 0));
  if (n.input_size() < 4 || n.output_size() != 1 || rank == l->facts().rank.end() || rank->second < 3) return false;
  std::vector<int64_t> axes;
  for (int d = 1; d + 1 < rank->second; ++d) axes.push_back(d);
  const std::string x = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string y = l->Value("ReduceMean");
  onnx::NodeProto* mean = l->Add("ReduceMean", {x}, {y});
  Lowering::SetInts(mean, "axes", axes);
  Lowering::SetInt(mean, "keepdims", 1);
  l->QuantizeInto(y, n.input(3), Input(n, 4), Input(n, 2));
  return true;
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input -> Y.
bool LowerConcat(const onnx::NodeProto& n, Lowering* l) {
  if (n.input_size() < 5 || (n.input_size() - 2) % 3 != 0 || n.output_size() != 1) return false;
  std::vector<std::string> parts;
  for (int i = 2; i + 2 < n.input_size(); i += 3) parts.push_back(l->Dequantize(n.input(i), n.input(i + 1), n.input(i + 2)));
  const std::string y = l->Value("Concat");
  l->CopyAttributes(l->Add("Concat", parts, {y}), {});
  l->QuantizeInto(y, n.input(0), n.input(1), n.input(4));
  return true;
}

// condition, X, X_scale, X_zero_point, Y, Y_scale, Y_zero_point, Z_scale, Z_zero_point -> Z.
bool LowerWhere(const onnx::NodeProto& n, Lowering* l) {
  if (n.input_size() < 8 || n.output_size() != 1) return false;
  const std::string x = l->Dequantize(n.input(1), n.input(2), n.input(3));
  const std::string y = l->Dequantize(n.input(4), n.input(5), n.input(6));
  const std::string z = l->Value("Where");
  l->Add("Where", {n.input(0), x, y}, {z});
  l->QuantizeInto(z, n.input(7), Input(n, 8), n.input(3));
  return true;
}

// A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32, in units of a_scale * b_scale, added to
// the product before alpha), y_scale, y_zero_point -> Y (float when y_scale is absent). B's scale per
// output column is along N.
bool LowerQGemm(const onnx::NodeProto& n, Lowering* l) {
  if (n.input_size() < 6 || n.output_size() != 1) return false;
  const int64_t trans_b = IntAttribute(n, "transB", 0);
  const std::string a = l->Dequantize(n.input(0), n.input(1), n.input(2));
  const std::string b = l->Dequantize(n.input(3), n.input(4), n.input(5), trans_b ? 0 : 1);
  std::vector<std::string> gemm_inputs = {a, b};
  if (!Input(n, 6).empty()) {
    // The bias's scale a_scale * b_scale: a constant when both are (the QDQ fusion then reads the
    // bias as int32 and runs the product on int8 kernels), else a Mul.
    std::string bias_scale;
    const auto& known = l->facts().initializers;
    auto as = known.find(n.input(1)), bs = known.find(n.input(4));
    if (as != known.end() && bs != known.end() && as->second->data_type() == onnx::TensorProto::FLOAT &&
        bs->second->data_type() == onnx::TensorProto::FLOAT) {
      auto a_scale = ConstFromProto(*as->second), b_scale = ConstFromProto(*bs->second);
      if (a_scale.ok() && b_scale.ok() && a_scale->floats.size() == 1 && !b_scale->floats.empty()) {
        std::vector<float> product;
        for (float b : b_scale->floats) product.push_back(a_scale->floats[0] * b);
        bias_scale = l->FloatConstant("bias_scale", product);
      }
    }
    if (bias_scale.empty()) {
      bias_scale = l->Value("bias_scale");
      l->Add("Mul", {n.input(1), n.input(4)}, {bias_scale});
    }
    gemm_inputs.push_back(l->Dequantize(n.input(6), bias_scale, "", 0));
  }
  const bool quantized = !Input(n, 7).empty();
  const std::string y = quantized ? l->Value("Gemm") : n.output(0);
  onnx::NodeProto* gemm = l->Add("Gemm", gemm_inputs, {y});
  l->CopyAttributes(gemm, {});
  // The int32 bias is added to the product before alpha scales the sum: beta = alpha.
  if (const onnx::AttributeProto* alpha = FindAttribute(n, "alpha")) {
    onnx::AttributeProto* beta = gemm->add_attribute();
    *beta = *alpha;
    beta->set_name("beta");
  }
  if (quantized) l->QuantizeInto(y, n.input(7), Input(n, 8), n.input(2));
  return true;
}

// Writes `n`'s lowering into `out`; false (nothing written) when it is not lowered. `model_opset`:
// the default domain's, which the ONNX nodes written are read at.
bool Lower(const onnx::NodeProto& n, ModelFacts* facts, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  const size_t added = facts->added.size();
  const int64_t model_opset = facts->opset;
  Lowering l(n, facts, &nodes);
  const std::string& t = n.op_type();
  bool lowered = false;
  if (t == "QLinearAdd") lowered = LowerBinary(n, &l, "Add");
  else if (t == "QLinearMul") lowered = LowerBinary(n, &l, "Mul");
  else if (t == "QLinearSigmoid") lowered = LowerUnary(n, &l, "Sigmoid", {});
  else if (t == "QLinearLeakyRelu") lowered = LowerUnary(n, &l, "LeakyRelu", {});
  else if (t == "QLinearSoftmax") {
    // QLinearSoftmax computes Softmax of its `opset`: from 13 over `axis` alone, before over every
    // axis from it on. The Softmax written is read at the model's opset: the same when both sides of
    // 13 agree, or on the last axis.
    const int64_t axis = IntAttribute(n, "axis", -1);
    if (axis == -1 || (IntAttribute(n, "opset", 13) >= 13) == (model_opset >= 13)) lowered = LowerUnary(n, &l, "Softmax", {"opset"});
  } else if (t == "QLinearGlobalAveragePool") lowered = LowerGlobalAveragePool(n, &l);
  else if (t == "QLinearAveragePool") {
    if (IntAttribute(n, "channels_last", 0) == 0) lowered = LowerUnary(n, &l, "AveragePool", {"channels_last"});
  } else if (t == "QLinearReduceMean") lowered = LowerUnary(n, &l, "ReduceMean", {});
  else if (t == "QLinearConcat") lowered = LowerConcat(n, &l);
  else if (t == "QLinearWhere") lowered = LowerWhere(n, &l);
  else if (t == "QGemm") lowered = LowerQGemm(n, &l);
  else if (t == "QuantizeLinear" || t == "DequantizeLinear") {
    onnx::NodeProto* same = nodes.Add();
    *same = n;
    same->clear_domain();
    lowered = true;
  }
  if (!lowered) {
    facts->added.resize(added);
    return false;
  }
  for (auto& m : nodes) *out->Add() = std::move(m);
  return true;
}

}  // namespace

int LowerContribQuantizedOps(onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  ModelFacts facts;
  for (const auto& o : model->opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") facts.opset = o.version();
  for (const auto& t : graph->initializer()) facts.initializers[t.name()] = &t;
  for (const auto* infos : {&graph->input(), &graph->value_info()})
    for (const auto& v : *infos)
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape()) facts.rank[v.name()] = v.type().tensor_type().shape().dim_size();
  int lowered = 0, left = 0;
  for (auto& n : *graph->mutable_node()) {
    if (n.domain() == kContribDomain && Lower(n, &facts, &nodes)) {
      ++lowered;
      continue;
    }
    left += n.domain() == kContribDomain;
    *nodes.Add() = std::move(n);
  }
  graph->mutable_node()->Swap(&nodes);
  for (auto& t : facts.added) *graph->add_initializer() = std::move(t);
  if (lowered && !left) {
    auto* imports = model->mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i)
      if (imports->Get(i).domain() == kContribDomain) imports->DeleteSubrange(i, 1);
  }
  return lowered;
}

}  // namespace tilebank::engine::model
