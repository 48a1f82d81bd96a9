// One operator instance to tune, read from an ATC-style single-op description:
//   {"op", "name"?, "input_desc": [{"format","shape","type"}], "output_desc": [...], "attr": [...]}
// The description is canonicalized (repo/canonical.h): the key, the ONNX op type and typed
// attributes come from there, so two spellings of one operator are one tuning task.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "repo/canonical.h"
#include "base/status.h"

namespace tilebank::engine {

struct TensorDesc {
  std::vector<int64_t> shape;
  std::string dtype;   // canonical spelling: float32, float16, ...
  std::string format;  // NCHW, NHWC, ND, ...
};

struct OpSpec {
  std::string name;  // "name" of the description, or <op type>_<index in the list>
  CanonicalDescriptor canonical;
  std::string op_type;  // ONNX name
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  nlohmann::json attrs = nlohmann::json::object();  // canonical attributes (defaults dropped)

  // Attribute getters falling back to `fallback` when the attribute is absent (at its default).
  int64_t Int(const std::string& attr, int64_t fallback) const;
  double Real(const std::string& attr, double fallback) const;
  std::string Text(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& attr, std::vector<int64_t> fallback) const;
};

// `index` names the op in messages and default names ("op 3 (Conv)").
Result<OpSpec> ParseOpSpec(const nlohmann::json& description, size_t index);
// Reads a JSON file holding a list of descriptions (or one description).
Result<std::vector<OpSpec>> ReadOpList(const std::string& path);

}  // namespace tilebank::engine
