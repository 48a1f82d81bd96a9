// ONNX import (libonnx): parse, load external data, onnx::checker::check_model, convert to the
// opset the executor implements, fix dynamic dimensions from --input-shape, infer shapes with
// data propagation, and turn the result into a Graph (engine/ir/graph.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "engine/core/load_phases.h"
#include "engine/ir/graph.h"
#include "base/status.h"

namespace onnx {
class ModelProto;
}

namespace tilebank::engine::model {

inline constexpr int kExecutorOpset = 17;

// ATC's spelling "name:d0,d1,...;name2:..."; kInvalidInput naming the bad part.
Result<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::string& text);

// Every failure is kInvalidInput or kNotFound naming the file and what is wrong: not an ONNX
// model (or truncated), a missing or short external data file, a failed check, an opset that
// cannot be converted, a dynamic dimension that --input-shape does not fix (naming the input and
// the flag), a value whose shape inference left unknown.
// `shapes_by_position` (the shapes of the runtime inputs in order, such as test data's) fixes the
// dims of an input that has dynamic ones and is not named in `input_shapes`.
// `phases`, when given, gets the read, libonnx's passes and the graph's building added to it.
Result<Graph> ImportOnnx(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                         const std::vector<std::vector<int64_t>>& shapes_by_position = {}, LoadPhases* phases = nullptr);

// The model's protobuf with its external data read in (every initializer inline), as ImportOnnx
// reads it; kNotFound / kInvalidInput naming the file.
Status ReadOnnxModel(const std::string& path, onnx::ModelProto* model);
// ReadOnnxModel's two halves: the protobuf alone (external tensors left as references), then the
// external tensors read in from files beside `path`.
Status ReadOnnxModelProto(const std::string& path, onnx::ModelProto* model);
Status LoadExternalTensors(onnx::ModelProto* model, const std::string& path);

// A model's runtime inputs and its outputs as the file declares them, before any shape is fixed.
struct DeclaredTensor {
  std::string name;
  std::string dtype;               // "float32", "int64", ... ("" when undeclared)
  std::vector<int64_t> dims;       // -1 where a dim is dynamic
  std::vector<std::string> params; // per dim: its symbolic name ("batch"), "" for a fixed or unnamed dim
  bool rank_known = true;
  ValueKind kind = ValueKind::kTensor;  // a sequence or optional: dtype its elements' (dims empty)
};
struct ModelSignature {
  std::vector<DeclaredTensor> inputs, outputs;  // inputs: those not initializers, in the graph's order
};
// kInvalidInput or kNotFound naming the file, as ImportOnnx's.
Result<ModelSignature> ReadModelSignature(const std::string& path);

}  // namespace tilebank::engine::model
