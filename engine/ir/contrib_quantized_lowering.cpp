#include "engine/ir/contrib_quantized_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

// Writes the replacement nodes of one contrib node, named after it.
class Lowering {
 public:
  Lowering(const onnx::NodeProto& node, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out)
      : node_(node), out_(out), prefix_((node.name().empty() ? node.output(0) : node.name()) + "/lowered") {}

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
    if (axis != 1) SetInt(n, "axis", axis);
    return y;
  }
  // QuantizeLinear(x, scale[, zero point]) into the contrib node's output `k`.
  void QuantizeInto(const std::string& x, const std::string& scale, const std::string& zero_point, int k = 0) {
    std::vector<std::string> inputs = {x, scale};
    if (!zero_point.empty()) inputs.push_back(zero_point);
    Add("QuantizeLinear", inputs, {node_.output(k)});
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
  google::protobuf::RepeatedPtrField<onnx::NodeProto>* out_;
  std::string prefix_;
  int count_ = 0;
};

// X, X_scale, X_zero_point, Y_scale, Y_zero_point -> Y: one float op between.
bool LowerUnary(const onnx::NodeProto& n, Lowering* l, const std::string& op_type, const std::vector<std::string>& skipped_attributes) {
  if (n.input_size() < 4 || n.output_size() != 1) return false;
  const std::string x = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string y = l->Value(op_type);
  l->CopyAttributes(l->Add(op_type, {x}, {y}), skipped_attributes);
  l->QuantizeInto(y, n.input(3), Input(n, 4));
  return true;
}

// A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point -> C.
bool LowerBinary(const onnx::NodeProto& n, Lowering* l, const std::string& op_type) {
  if (n.input_size() < 7 || n.output_size() != 1) return false;
  const std::string a = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string b = l->Dequantize(n.input(3), n.input(4), Input(n, 5));
  const std::string c = l->Value(op_type);
  l->Add(op_type, {a, b}, {c});
  l->QuantizeInto(c, n.input(6), Input(n, 7));
  return true;
}

bool LowerGlobalAveragePool(const onnx::NodeProto& n, Lowering* l) {
  if (IntAttribute(n, "channels_last", 0) == 0) return LowerUnary(n, l, "GlobalAveragePool", {"channels_last"});
  // [N, spatial..., C]: the mean over every axis but the first and last. Its rank is not known here:
  // only 4-D (NHWC) is lowered.
  if (n.input_size() < 4 || n.output_size() != 1) return false;
  const std::string x = l->Dequantize(n.input(0), n.input(1), Input(n, 2));
  const std::string y = l->Value("ReduceMean");
  onnx::NodeProto* mean = l->Add("ReduceMean", {x}, {y});
  Lowering::SetInts(mean, "axes", {1, 2});
  Lowering::SetInt(mean, "keepdims", 1);
  l->QuantizeInto(y, n.input(3), Input(n, 4));
  return true;
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input -> Y.
bool LowerConcat(const onnx::NodeProto& n, Lowering* l) {
  if (n.input_size() < 5 || (n.input_size() - 2) % 3 != 0 || n.output_size() != 1) return false;
  std::vector<std::string> parts;
  for (int i = 2; i + 2 < n.input_size(); i += 3) parts.push_back(l->Dequantize(n.input(i), n.input(i + 1), n.input(i + 2)));
  const std::string y = l->Value("Concat");
  l->CopyAttributes(l->Add("Concat", parts, {y}), {});
  l->QuantizeInto(y, n.input(0), n.input(1));
  return true;
}

// condition, X, X_scale, X_zero_point, Y, Y_scale, Y_zero_point, Z_scale, Z_zero_point -> Z.
bool LowerWhere(const onnx::NodeProto& n, Lowering* l) {
  if (n.input_size() < 8 || n.output_size() != 1) return false;
  const std::string x = l->Dequantize(n.input(1), n.input(2), n.input(3));
  const std::string y = l->Dequantize(n.input(4), n.input(5), n.input(6));
  const std::string z = l->Value("Where");
  l->Add("Where", {n.input(0), x, y}, {z});
  l->QuantizeInto(z, n.input(7), Input(n, 8));
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
    const std::string bias_scale = l->Value("bias_scale");
    l->Add("Mul", {n.input(1), n.input(4)}, {bias_scale});
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
  if (quantized) l->QuantizeInto(y, n.input(7), Input(n, 8));
  return true;
}

// Writes `n`'s lowering into `out`; false (nothing written) when it is not lowered. `model_opset`:
// the default domain's, which the ONNX nodes written are read at.
bool Lower(const onnx::NodeProto& n, int64_t model_opset, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  Lowering l(n, &nodes);
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
  if (!lowered) return false;
  for (auto& m : nodes) *out->Add() = std::move(m);
  return true;
}

}  // namespace

int LowerContribQuantizedOps(onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int64_t model_opset = 0;
  for (const auto& o : model->opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") model_opset = o.version();
  int lowered = 0, left = 0;
  for (auto& n : *graph->mutable_node()) {
    if (n.domain() == kContribDomain && Lower(n, model_opset, &nodes)) {
      ++lowered;
      continue;
    }
    left += n.domain() == kContribDomain;
    *nodes.Add() = std::move(n);
  }
  graph->mutable_node()->Swap(&nodes);
  if (lowered && !left) {
    auto* imports = model->mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i)
      if (imports->Get(i).domain() == kContribDomain) imports->DeleteSubrange(i, 1);
  }
  return lowered;
}

}  // namespace tilebank::engine::model
