#include "engine/ir/model_metadata.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <set>

#include "engine/core/dtype.h"
#include "engine/ir/onnx_import.h"
#include "engine/ir/tensor_proto.h"

namespace tilebank::engine::model {

namespace {

// ONNX's TensorProto element types as ONNX Runtime names them inside "tensor(...)".
std::string OrtElementName(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return "float";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "double";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

}  // namespace

std::string OrtTypeName(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return "tensor(" + OrtElementName(type.tensor_type().elem_type()) + ")";
  if (type.has_sparse_tensor_type()) return "sparse_tensor(" + OrtElementName(type.sparse_tensor_type().elem_type()) + ")";
  if (type.has_sequence_type()) return "seq(" + OrtTypeName(type.sequence_type().elem_type()) + ")";
  if (type.has_optional_type()) return "optional(" + OrtTypeName(type.optional_type().elem_type()) + ")";
  if (type.has_map_type())
    return "map(" + OrtElementName(type.map_type().key_type()) + "," + OrtTypeName(type.map_type().value_type()) + ")";
  return "";
}

namespace {

DeclaredValue Declared(const onnx::ValueInfoProto& v) {
  DeclaredValue d;
  d.name = v.name();
  d.type = OrtTypeName(v.type());
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return d;
  d.rank_known = true;
  for (const auto& dim : v.type().tensor_type().shape().dim()) {
    d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    d.params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    d.denotations.push_back(dim.denotation());
  }
  return d;
}

}  // namespace

Result<ModelMetadata> ReadModelMetadata(const std::string& path) {
  onnx::ModelProto model;
  TB_RETURN_IF_ERROR(ReadOnnxModelProto(path, &model));
  ModelMetadata m;
  m.producer_name = model.producer_name();
  m.producer_version = model.producer_version();
  m.graph_name = model.graph().name();
  m.domain = model.domain();
  m.description = model.doc_string();
  m.graph_description = model.graph().doc_string();
  m.version = model.model_version();
  for (const auto& prop : model.metadata_props()) m.custom[prop.key()] = prop.value();
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  // Before IR version 4 every initializer was listed among the inputs, as a constant: none is a
  // default a feed may replace.
  const bool overridable = model.ir_version() >= 4;
  for (const auto& input : model.graph().input()) {
    if (!initializers.count(input.name())) m.inputs.push_back(Declared(input));
    else if (overridable) m.overridable_initializers.push_back(Declared(input));
  }
  for (const auto& output : model.graph().output()) m.outputs.push_back(Declared(output));
  return m;
}

Status WriteModelWithInitializers(const std::string& path, const std::map<std::string, TypedTensor>& replaced, const std::string& out_path) {
  onnx::ModelProto model;
  TB_RETURN_IF_ERROR(ReadOnnxModelProto(path, &model));
  std::set<std::string> done;
  for (auto& initializer : *model.mutable_graph()->mutable_initializer()) {
    auto it = replaced.find(initializer.name());
    if (it == replaced.end()) continue;
    const DType declared = DTypeOfOnnx(initializer.data_type());
    const std::vector<int64_t> dims(initializer.dims().begin(), initializer.dims().end());
    if (declared != it->second.dtype || dims != it->second.shape)
      return Status::InvalidInput("initializer '" + it->first + "' of " + path + " is " + DTypeName(declared) + " " + ShapeText(dims) +
                                  "; the value given is " + DTypeName(it->second.dtype) + " " + ShapeText(it->second.shape));
    initializer = ProtoFromTensor(it->first, it->second);
    done.insert(it->first);
  }
  for (const auto& [name, value] : replaced)
    if (!done.count(name)) return Status::InvalidInput("'" + name + "' is not an initializer of " + path);
  TB_RETURN_IF_ERROR(LoadExternalTensors(&model, path));
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX))
    return Status::InvalidInput(path + " with its weights inline is over protobuf's 2 GiB: its initializers cannot be replaced");
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  const bool written = out && model.SerializeToOstream(&out);
  out.close();
  if (!written || !out) return Status::IoError("cannot write " + out_path);
  return Status::Ok();
}

}  // namespace tilebank::engine::model
