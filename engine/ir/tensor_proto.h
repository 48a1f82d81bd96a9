// ONNX TensorProto <-> tilebank tensors: initializers, Constant nodes and ONNX's test-data files
// (input_0.pb, output_0.pb, ...).
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "engine/ir/graph.h"
#include "engine/core/typed_tensor.h"
#include "base/status.h"

namespace tilebank::engine::model {

// A node attribute as Node::attrs keeps it: int, float, string or a list of them; null for tensors
// and graphs (read where an op needs them).
nlohmann::json AttributeJson(const onnx::AttributeProto& a);

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

// Any tensor of a DType (every ONNX element type but the complex ones), from raw_data or the typed
// field ONNX stores it in (int32_data for the 8- and 16-bit types and float16/bfloat16 bits,
// uint64_data for uint32/uint64, string_data). kInvalidInput naming the tensor for a complex or
// unknown type, a negative dimension, or data that does not match the dims.
Result<TypedTensor> TensorFromProto(const onnx::TensorProto& proto);
// `t` as a TensorProto named `name` (raw_data for numbers, string_data for strings).
onnx::TensorProto ProtoFromTensor(const std::string& name, const TypedTensor& t);
// A TensorProto file (ONNX test data: input_0.pb, output_0.pb) of any type; kNotFound when it cannot
// be read, kInvalidInput naming the file when it does not parse or TensorFromProto refuses it.
Result<TypedTensor> ReadTensorFile(const std::string& path);
// The kind of value an ONNX type declares (a sequence, an optional, else a tensor), and its element
// type (a sequence's or an optional's innermost tensor's; kUndefined when it names none).
ValueKind KindOfType(const onnx::TypeProto& type);
DType ElementTypeOf(const onnx::TypeProto& type);
// ONNX test data of any kind, read as the model declares the value (the file does not say: a
// SequenceProto parses as a TensorProto of nonsense): a TensorProto for a tensor, a SequenceProto of
// tensors for a sequence, an OptionalProto for an optional; an empty sequence or optional takes
// `dtype`. kNotFound when it cannot be read, kInvalidInput naming the file otherwise.
Result<TypedTensor> ReadValueFile(const std::string& path, ValueKind kind, DType dtype);

}  // namespace tilebank::engine::model
