// One ONNX backend node test (libonnx-testdata: data/node/<test>/model.onnx and
// test_data_set_0/{input,output}_N.pb) turned into what the engine takes: an ATC-style op
// description, input tensors and the expected first output.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "base/status.h"

namespace google::protobuf { class Message; }

namespace tilebank::testing {

struct OnnxNodeCase {
  std::string name;     // the test directory, e.g. test_conv_with_strides_padding
  std::string op_type;  // the node's op_type
  nlohmann::json description;
  std::vector<engine::Tensor> inputs;
  engine::Tensor expected;
};

// Parses the protobuf file `path` (a model, a tensor) into `message`; false when it cannot be read.
bool ReadProtoFile(const std::filesystem::path& path, google::protobuf::Message* message);

// The op_type of the single node of a test's model; empty for a multi-node (expanded) model.
std::string OnnxNodeOpType(const std::filesystem::path& test_dir);

// kInvalidInput with the reason when the case cannot be described for the engine (a non-float
// tensor, a missing data set, ...).
Result<OnnxNodeCase> LoadOnnxNodeCase(const std::filesystem::path& test_dir);

}  // namespace tilebank::testing
