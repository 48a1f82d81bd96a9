// What a model file says of itself beyond its nodes: the fields ONNX Runtime's get_modelmeta
// reports, each graph input's and output's type in ONNX Runtime's spelling, and the denotations of
// the inputs' dims. Read from the protobuf alone (no external data, no shape inference).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/typed_tensor.h"

namespace onnx {
class TypeProto;
}

namespace tilebank::engine::model {

// A graph input or output as the file declares it.
struct DeclaredValue {
  std::string name;
  std::string type;  // OrtTypeName's
  bool rank_known = false;  // a tensor with a shape
  // Per dim: its value (-1 when it has none), its symbolic name ("" none) and its denotation ("" none).
  std::vector<int64_t> dims;
  std::vector<std::string> params, denotations;
};
struct ModelMetadata {
  std::string producer_name, producer_version, graph_name, domain;
  std::string description;        // the model's doc_string
  std::string graph_description;  // the graph's doc_string
  int64_t version = 0;            // model_version
  std::map<std::string, std::string> custom;  // metadata_props
  std::vector<DeclaredValue> inputs;   // graph inputs without an initializer, in the graph's order
  std::vector<DeclaredValue> outputs;  // graph outputs
  std::vector<DeclaredValue> overridable_initializers;  // graph inputs with an initializer (a default a feed may replace; none before IR 4)
};
// kNotFound / kInvalidInput naming the file, as ReadModelSignature's.
Result<ModelMetadata> ReadModelMetadata(const std::string& path);

// A value's type as ONNX Runtime spells it: "tensor(float)", "seq(tensor(int64))",
// "optional(tensor(float))", "map(string,tensor(float))"; "" when the type is not given.
std::string OrtTypeName(const onnx::TypeProto& type);

// `path`'s model with the data of the initializers named in `replaced` taken from it (each must be
// an initializer of the main graph, of the same dtype and shape), every other external tensor read
// in, written self-contained to `out_path`. kInvalidInput naming an unknown initializer, a dtype or
// shape that differs, or a model over protobuf's 2 GiB once inline; the file's own errors as
// ReadOnnxModel's; kIoError when out_path cannot be written.
Status WriteModelWithInitializers(const std::string& path, const std::map<std::string, TypedTensor>& replaced, const std::string& out_path);

}  // namespace tilebank::engine::model
