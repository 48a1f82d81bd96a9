#include "engine/core/op_spec.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tilebank::engine {

int64_t OpSpec::Int(const std::string& attr, int64_t fallback) const {
  auto it = attrs.find(attr);
  return it != attrs.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

double OpSpec::Real(const std::string& attr, double fallback) const {
  auto it = attrs.find(attr);
  return it != attrs.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string OpSpec::Text(const std::string& attr, const std::string& fallback) const {
  auto it = attrs.find(attr);
  return it != attrs.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<int64_t> OpSpec::Ints(const std::string& attr, std::vector<int64_t> fallback) const {
  auto it = attrs.find(attr);
  if (it == attrs.end() || !it->is_array()) return fallback;
  std::vector<int64_t> values;
  for (const auto& v : *it) values.push_back(v.get<int64_t>());
  return values;
}

namespace {

constexpr int64_t kMaxTensorElements = int64_t{1} << 48;  // element counts and byte sizes stay far from overflow

std::vector<TensorDesc> DescsOf(const nlohmann::json& list) {
  std::vector<TensorDesc> descs;
  for (const auto& d : list) {
    TensorDesc t;
    for (const auto& s : d.at("shape")) t.shape.push_back(s.get<int64_t>());
    t.dtype = d.value("dtype", "float32");
    t.format = d.value("format", "ND");
    descs.push_back(std::move(t));
  }
  return descs;
}

// Conv and pooling with auto_pad SAME_UPPER, SAME_LOWER or VALID get the explicit pads ONNX
// defines for it, so the templates and the reference see one form. (The bank key stays that of
// the description as written.)
void ResolveAutoPad(OpSpec* op) {
  const std::string mode = op->Text("auto_pad", "NOTSET");
  if (mode == "NOTSET" || (op->op_type != "Conv" && op->op_type != "MaxPool" && op->op_type != "AveragePool")) return;
  if (op->inputs.empty() || op->inputs[0].shape.size() < 3) return;  // the op's own checks refuse it
  const auto& x = op->inputs[0].shape;
  const size_t dims = x.size() - 2;
  std::vector<int64_t> kernel = op->Ints("kernel_shape", {});
  if (kernel.empty() && op->op_type == "Conv" && op->inputs.size() > 1 && op->inputs[1].shape.size() == x.size())
    kernel.assign(op->inputs[1].shape.begin() + 2, op->inputs[1].shape.end());
  auto strides = op->Ints("strides", std::vector<int64_t>(dims, 1)), dilations = op->Ints("dilations", std::vector<int64_t>(dims, 1));
  if (kernel.size() != dims || strides.size() != dims || dilations.size() != dims) return;
  std::vector<int64_t> pads(2 * dims, 0);
  if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    for (size_t i = 0; i < dims; ++i) {
      const int64_t out = (x[i + 2] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - x[i + 2]);
      pads[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + dims] = total - pads[i];
    }
  } else if (mode != "VALID") {
    return;  // an unknown mode stays, and the op's checks name it
  }
  op->attrs.erase("auto_pad");
  op->attrs["pads"] = pads;
}

}  // namespace

Result<OpSpec> ParseOpSpec(const nlohmann::json& description, size_t index) {
  const std::string given_name = description.is_object() && description.contains("name") && description["name"].is_string()
                                     ? description["name"].get<std::string>() : "";
  auto where = [&](const std::string& type) {
    const std::string label = given_name.empty() ? type : type.empty() ? given_name : given_name + ", " + type;
    return "op " + std::to_string(index) + (label.empty() ? "" : " (" + label + ")");
  };
  if (!description.is_object() || !description.contains("op"))
    return Status::InvalidInput(where("") + ": not an operator description (an object with \"op\", \"input_desc\", \"output_desc\")");
  auto canonical = CanonicalizeOp(description);
  if (!canonical.ok()) return canonical.status().WithContext(where(description.value("op", "")));
  OpSpec spec;
  spec.canonical = canonical.value();
  spec.op_type = spec.canonical.op_type;
  auto text = nlohmann::json::parse(spec.canonical.text);
  spec.inputs = DescsOf(text.at("in"));
  spec.outputs = DescsOf(text.at("out"));
  if (text.contains("attr")) spec.attrs = text.at("attr");
  if (description.contains("name")) {
    if (!description.at("name").is_string() || description.at("name").get<std::string>().empty())
      return Status::InvalidInput(where(spec.op_type) + ": \"name\" must be a non-empty string");
    spec.name = description.at("name").get<std::string>();
  } else {
    spec.name = spec.op_type + "_" + std::to_string(index);
  }
  if (spec.outputs.empty()) return Status::InvalidInput(where(spec.op_type) + ": output_desc is empty");
  ResolveAutoPad(&spec);
  for (const auto* list : {&spec.inputs, &spec.outputs})
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string field = std::string(list == &spec.inputs ? "input_desc[" : "output_desc[") + std::to_string(i) + "].shape";
      int64_t elements = 1;
      for (int64_t d : (*list)[i].shape) {
        if (d <= 0) return Status::InvalidInput(where(spec.op_type) + ": " + field + ": dimensions must be positive (dynamic shapes are not tuned)");
        if (__builtin_mul_overflow(elements, d, &elements) || elements > kMaxTensorElements)
          return Status::InvalidInput(where(spec.op_type) + ": " + field + " has more than 2^48 elements");
      }
    }
  return spec;
}

Result<std::vector<OpSpec>> ReadOpList(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read operator list " + path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json list = nlohmann::json::parse(text.str(), nullptr, false);
  if (list.is_discarded()) return Status::InvalidInput(path + ": not valid JSON");
  if (list.is_object()) list = nlohmann::json::array({list});
  if (!list.is_array() || list.empty()) return Status::InvalidInput(path + ": expected a non-empty list of operator descriptions");
  std::vector<OpSpec> ops;
  for (size_t i = 0; i < list.size(); ++i) {
    auto op = ParseOpSpec(list[i], i);
    if (!op.ok()) return op.status().WithContext(path);
    ops.push_back(std::move(op.value()));
  }
  return ops;
}

}  // namespace tilebank::engine
