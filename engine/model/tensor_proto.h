// ONNX TensorProto <-> tilebank tensors: initializers, Constant nodes and ONNX's test-data files
// (input_0.pb, output_0.pb, ...).
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "engine/model/graph.h"
#include "repo/status.h"

namespace tilebank::engine::model {

// "float32", "int64", ... for an ONNX element type.
std::string DtypeName(int onnx_elem_type);

// The tensor's values (raw_data or the typed fields): float and double as floats; integer and
// bool types as ints. Other types (strings, float16, ...) and a size that disagrees with the
// dims are kInvalidInput naming the tensor.
Result<ConstTensor> ConstFromProto(const onnx::TensorProto& proto);

// An initializer named `name` holding `c` as ONNX element type `dtype` (a DtypeName: float32,
// float64, int64, int32, int16, int8, uint8 or bool); kInvalidInput for other types.
Result<onnx::TensorProto> ProtoFromConst(const std::string& name, const ConstTensor& c, const std::string& dtype);

// A TensorProto file (ONNX test data) as a float32 tensor: kInvalidInput naming the file when it
// does not parse or is not float32.
Result<Tensor> ReadFloatTensorFile(const std::string& path);

}  // namespace tilebank::engine::model
