#include "tests/onnx_node_case.h"

#include <onnx/onnx_pb.h>

#include <fstream>

#include "engine/ir/tensor_proto.h"

namespace tilebank::testing {

bool ReadProtoFile(const std::filesystem::path& path, google::protobuf::Message* message) {
  std::ifstream in(path, std::ios::binary);
  return in && message->ParseFromIstream(&in);
}

namespace {

bool ReadModel(const std::filesystem::path& dir, onnx::ModelProto* model) { return ReadProtoFile(dir / "model.onnx", model); }

Result<engine::Tensor> FloatTensor(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::FLOAT) return Status::InvalidInput("tensor " + t.name() + " is not float32");
  auto c = engine::model::ConstFromProto(t);
  if (!c.ok()) return c.status();
  return c->AsTensor();
}

Result<std::vector<int64_t>> IntValues(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::INT64) return Status::InvalidInput("tensor " + t.name() + " is not int64");
  auto c = engine::model::ConstFromProto(t);
  if (!c.ok()) return c.status();
  return c->ints;
}

nlohmann::json Desc(const std::vector<int64_t>& shape) { return {{"shape", shape}, {"type", "float32"}}; }

Result<nlohmann::json> Attribute(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return nlohmann::json{{"name", a.name()}, {"type", "int"}, {"value", a.i()}};
    case onnx::AttributeProto::FLOAT: return nlohmann::json{{"name", a.name()}, {"type", "float"}, {"value", a.f()}};
    case onnx::AttributeProto::STRING: return nlohmann::json{{"name", a.name()}, {"type", "str"}, {"value", a.s()}};
    case onnx::AttributeProto::INTS:
      return nlohmann::json{{"name", a.name()}, {"type", "list_int"}, {"value", std::vector<int64_t>(a.ints().begin(), a.ints().end())}};
    case onnx::AttributeProto::FLOATS:
      return nlohmann::json{{"name", a.name()}, {"type", "list_float"}, {"value", std::vector<float>(a.floats().begin(), a.floats().end())}};
    default: return Status::InvalidInput("attribute " + a.name() + " has an unsupported type");
  }
}

}  // namespace

std::string OnnxNodeOpType(const std::filesystem::path& test_dir) {
  onnx::ModelProto model;
  if (!ReadModel(test_dir, &model) || model.graph().node_size() != 1) return "";
  return model.graph().node(0).op_type();
}

Result<OnnxNodeCase> LoadOnnxNodeCase(const std::filesystem::path& dir) {
  onnx::ModelProto model;
  if (!ReadModel(dir, &model)) return Status::InvalidInput(dir.string() + ": model.onnx does not parse");
  if (model.graph().node_size() != 1) return Status::InvalidInput("not a single-node model");
  const onnx::NodeProto& node = model.graph().node(0);
  OnnxNodeCase c;
  c.name = dir.filename().string();
  c.op_type = node.op_type();
  nlohmann::json attrs = nlohmann::json::array();
  for (const auto& a : node.attribute()) {
    auto attr = Attribute(a);
    if (!attr.ok()) return attr.status();
    attrs.push_back(attr.value());
  }
  const auto data = dir / "test_data_set_0";
  nlohmann::json inputs = nlohmann::json::array();
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;  // an optional input left out
    onnx::TensorProto t;
    if (!ReadProtoFile(data / ("input_" + std::to_string(i) + ".pb"), &t)) return Status::InvalidInput("input_" + std::to_string(i) + ".pb is missing");
    // ReduceSum (opset 13) takes its axes as an int64 input; the engine takes them as the attribute.
    if (c.op_type == "ReduceSum" && i == 1) {
      auto axes = IntValues(t);
      if (!axes.ok()) return axes.status();
      attrs.push_back({{"name", "axes"}, {"type", "list_int"}, {"value", axes.value()}});
      continue;
    }
    auto tensor = FloatTensor(t);
    if (!tensor.ok()) return tensor.status();
    inputs.push_back(Desc(tensor->shape));
    c.inputs.push_back(std::move(tensor.value()));
  }
  onnx::TensorProto out;
  if (!ReadProtoFile(data / "output_0.pb", &out)) return Status::InvalidInput("output_0.pb is missing");
  auto expected = FloatTensor(out);
  if (!expected.ok()) return expected.status();
  c.expected = std::move(expected.value());
  c.description = {{"op", c.op_type}, {"name", c.name}, {"input_desc", inputs}, {"output_desc", {Desc(c.expected.shape)}}, {"attr", attrs}};
  return c;
}

}  // namespace tilebank::testing
