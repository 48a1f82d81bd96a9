#include "engine/ir/tensor_proto.h"

#include <onnx/onnx-data_pb.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <type_traits>

namespace tilebank::engine::model {

namespace {

// Whether `raw` holds exactly `count` elements of `element_bytes` (divided, never multiplied: a
// count near 2^62 times the element size wraps around).
bool RawHolds(const std::string& raw, int64_t count, size_t element_bytes) {
  return raw.size() % element_bytes == 0 && raw.size() / element_bytes == static_cast<uint64_t>(count);
}

template <typename T, typename Field>
std::vector<T> FromRawOrField(const onnx::TensorProto& p, const Field& field, size_t raw_element_bytes, int64_t count, bool* ok) {
  std::vector<T> out;
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    *ok = RawHolds(raw, count, raw_element_bytes);
    if (!*ok) return out;
    if constexpr (sizeof(T) == 1) {  // bytes as they are: no zero-fill, no per-element pass
      out.assign(raw.begin(), raw.end());
      return out;
    }
    out.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      const char* at = raw.data() + i * raw_element_bytes;
      if (raw_element_bytes == 8) { int64_t v; std::memcpy(&v, at, 8); out[i] = static_cast<T>(v); }
      else if (raw_element_bytes == 4) { int32_t v; std::memcpy(&v, at, 4); out[i] = static_cast<T>(v); }
      else if (raw_element_bytes == 2) { int16_t v; std::memcpy(&v, at, 2); out[i] = static_cast<T>(v); }
      else out[i] = static_cast<T>(static_cast<signed char>(*at));
    }
    return out;
  }
  *ok = field.size() == count;
  out.assign(field.begin(), field.end());
  return out;
}

// The element count of `p`'s dims, refused when a dim is negative or the product overflows (2^62):
// every reader checks it before it compares the data present or allocates.
Result<int64_t> ElementCount(const onnx::TensorProto& p) {
  int64_t count = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) return Status::InvalidInput("tensor '" + p.name() + "' has a negative dimension");
    if (d != 0 && count > (int64_t{1} << 62) / d) return Status::InvalidInput("tensor '" + p.name() + "': its dims hold more than 2^62 elements");
    count *= d;
  }
  return count;
}

}  // namespace

std::string DtypeName(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::STRING: return "string";
    default: return DTypeName(static_cast<DType>(t));
  }
}

Result<ConstTensor> ConstFromProto(const onnx::TensorProto& p) {
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  auto counted = ElementCount(p);
  if (!counted.ok()) return counted.status();
  const int64_t count = counted.value();
  bool ok = true;
  ConstTensor c;
  c.shape = shape;
  switch (p.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (p.has_raw_data()) {
        ok = RawHolds(p.raw_data(), count, sizeof(float));
        if (ok) {
          c.floats.resize(count);
          std::memcpy(c.floats.data(), p.raw_data().data(), p.raw_data().size());
        }
      } else {
        ok = p.float_data_size() == count;
        c.floats.assign(p.float_data().begin(), p.float_data().end());
      }
      break;
    case onnx::TensorProto::DOUBLE: {
      if (p.has_raw_data()) {
        ok = RawHolds(p.raw_data(), count, sizeof(double));
        for (int64_t i = 0; ok && i < count; ++i) {
          double v;
          std::memcpy(&v, p.raw_data().data() + i * sizeof(double), sizeof v);
          c.floats.push_back(static_cast<float>(v));
        }
      } else {
        ok = p.double_data_size() == count;
        c.floats.assign(p.double_data().begin(), p.double_data().end());
      }
      break;
    }
    case onnx::TensorProto::INT64:
      c.type = ConstTensor::Type::kInt;
      c.ints = FromRawOrField<int64_t>(p, p.int64_data(), 8, count, &ok);
      break;
    case onnx::TensorProto::INT32:
      c.type = ConstTensor::Type::kInt;
      c.ints = FromRawOrField<int64_t>(p, p.int32_data(), 4, count, &ok);
      break;
    case onnx::TensorProto::INT16:
      c.type = ConstTensor::Type::kInt;
      c.ints = FromRawOrField<int64_t>(p, p.int32_data(), 2, count, &ok);
      break;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      // One byte each, as they are stored (int32_data holds each in an int32).
      c.type = p.data_type() == onnx::TensorProto::INT8 ? ConstTensor::Type::kInt8 : ConstTensor::Type::kUInt8;
      c.bytes = FromRawOrField<uint8_t>(p, p.int32_data(), 1, count, &ok);
      if (p.data_type() == onnx::TensorProto::BOOL)  // any nonzero is true: held as 1, a valid bool
        for (uint8_t& b : c.bytes) b = b != 0;
      break;
    default:
      return Status::InvalidInput("tensor '" + p.name() + "' is " + DtypeName(p.data_type()) + ", which the executor does not read");
  }
  if (!ok) return Status::InvalidInput("tensor '" + p.name() + "': its data does not match its dims");
  return c;
}

Result<onnx::TensorProto> ProtoFromConst(const std::string& name, const ConstTensor& c, const std::string& dtype) {
  onnx::TensorProto p;
  p.set_name(name);
  for (int64_t d : c.shape) p.add_dims(d);
  const int64_t n = c.size();
  // An integer constant's values as they are (through a double, INT64_MAX, Slice's "to the end",
  // would round to 2^63, which no int64 holds).
  auto integer = [&](int64_t i) { return c.IsInteger() ? c.IntAt(i) : static_cast<int64_t>(c.At(i)); };
  if (dtype == "float32") {
    p.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t i = 0; i < n; ++i) p.add_float_data(static_cast<float>(c.At(i)));
  } else if (dtype == "float64") {
    p.set_data_type(onnx::TensorProto::DOUBLE);
    for (int64_t i = 0; i < n; ++i) p.add_double_data(c.At(i));
  } else if (dtype == "int64") {
    p.set_data_type(onnx::TensorProto::INT64);
    for (int64_t i = 0; i < n; ++i) p.add_int64_data(integer(i));
  } else {
    static const std::map<std::string, int> int32_fields = {{"int32", onnx::TensorProto::INT32}, {"int16", onnx::TensorProto::INT16},
                                                            {"int8", onnx::TensorProto::INT8},   {"uint8", onnx::TensorProto::UINT8},
                                                            {"bool", onnx::TensorProto::BOOL}};
    auto it = int32_fields.find(dtype);
    if (it == int32_fields.end()) return Status::InvalidInput("tensor '" + name + "': " + dtype + " constants are not written");
    p.set_data_type(it->second);
    for (int64_t i = 0; i < n; ++i) p.add_int32_data(dtype == "bool" ? c.At(i) != 0 : static_cast<int32_t>(integer(i)));
  }
  return p;
}

Result<Tensor> ReadFloatTensorFile(const std::string& path) {
  auto t = ReadTensorFile(path);
  if (!t.ok()) return t.status();
  if (t->dtype != DType::kFloat32) return Status::InvalidInput(path + " holds " + DTypeName(t->dtype) + " data; the executor reads float32");
  return t->ToFloat();
}

namespace {

// Copies `field` (a repeated proto field of another width) into t's elements of type T.
template <class T, class Field>
bool CopyField(const Field& field, TypedTensor* t) {
  if (field.size() != t->size()) return false;
  T* out = t->data<T>();
  for (int64_t i = 0; i < t->size(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) out[i].bits = static_cast<uint16_t>(field.Get(i));
    else out[i] = static_cast<T>(field.Get(i));
  }
  return true;
}

}  // namespace

Result<TypedTensor> TensorFromProto(const onnx::TensorProto& p) {
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  auto counted = ElementCount(p);
  if (!counted.ok()) return counted.status();
  const int64_t count = counted.value();
  const DType dtype = DTypeOfOnnx(p.data_type());
  if (dtype == DType::kUndefined || dtype == DType::kComplex64 || dtype == DType::kComplex128)
    return Status::InvalidInput("tensor '" + p.name() + "' is " + DtypeName(p.data_type()) + ", which the executor does not read");
  // The data present bounds the element count before anything is allocated.
  const int64_t present = dtype == DType::kString ? p.string_data_size()
                          : p.has_raw_data()      ? static_cast<int64_t>(p.raw_data().size() / std::max<size_t>(1, ElementBytes(dtype)))
                                                  : std::max({p.float_data_size(), p.double_data_size(), p.int32_data_size(), p.int64_data_size(),
                                                              p.uint64_data_size()});
  if (count != present) return Status::InvalidInput("tensor '" + p.name() + "': its data does not match its dims");
  TypedTensor t(dtype, shape);
  bool ok = true;
  if (dtype == DType::kString) {
    ok = p.string_data_size() == t.size();
    if (ok) t.strings.assign(p.string_data().begin(), p.string_data().end());
  } else if (p.has_raw_data()) {
    ok = p.raw_data().size() == t.bytes.size();
    if (ok && !t.bytes.empty()) std::memcpy(t.bytes.data(), p.raw_data().data(), t.bytes.size());
  } else {
    switch (dtype) {
      case DType::kFloat32: ok = CopyField<float>(p.float_data(), &t); break;
      case DType::kFloat64: ok = CopyField<double>(p.double_data(), &t); break;
      case DType::kInt64: ok = CopyField<int64_t>(p.int64_data(), &t); break;
      case DType::kUInt32: ok = CopyField<uint32_t>(p.uint64_data(), &t); break;
      case DType::kUInt64: ok = CopyField<uint64_t>(p.uint64_data(), &t); break;
      default:  // the 8-, 16- and 32-bit integer types, bool, float16 and bfloat16: int32_data
        ok = VisitNumeric(dtype, [&](auto tag) { return CopyField<decltype(tag)>(p.int32_data(), &t); }, [] { return false; });
    }
  }
  if (!ok) return Status::InvalidInput("tensor '" + p.name() + "': its data does not match its dims");
  return t;
}

onnx::TensorProto ProtoFromTensor(const std::string& name, const TypedTensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int>(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  if (t.dtype == DType::kString) {
    for (const std::string& s : t.strings) p.add_string_data(s);
  } else {
    p.set_raw_data(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  }
  return p;
}

Result<TypedTensor> ReadTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in)) return Status::InvalidInput(path + " is not an ONNX TensorProto file");
  auto t = TensorFromProto(proto);
  if (!t.ok()) return t.status().WithContext(path);
  return t;
}

namespace {

Result<TypedTensor> SequenceFromProto(const onnx::SequenceProto& p, DType dtype) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && !(p.elem_type() == onnx::SequenceProto::UNDEFINED && p.tensor_values_size() == 0))
    return Status::InvalidInput("sequence '" + p.name() + "' holds " + std::to_string(p.elem_type()) + " elements; the executor reads sequences of tensors");
  std::vector<TypedTensor> elements;
  for (const auto& t : p.tensor_values()) {
    auto e = TensorFromProto(t);
    if (!e.ok()) return e.status();
    if (!elements.empty() && e->dtype != elements[0].dtype)
      return Status::InvalidInput("sequence '" + p.name() + "' mixes " + DTypeName(elements[0].dtype) + " and " + DTypeName(e->dtype) + " tensors");
    elements.push_back(std::move(e.value()));
  }
  return TypedTensor::Sequence(dtype, std::move(elements));
}

Result<TypedTensor> OptionalFromProto(const onnx::OptionalProto& p, DType dtype) {
  if (p.has_tensor_value()) {
    auto t = TensorFromProto(p.tensor_value());
    if (!t.ok()) return t.status();
    return TypedTensor::OptionalOf(std::move(t.value()));
  }
  if (p.has_sequence_value()) {
    auto s = SequenceFromProto(p.sequence_value(), dtype);
    if (!s.ok()) return s.status();
    return TypedTensor::OptionalOf(std::move(s.value()));
  }
  if (p.elem_type() == onnx::OptionalProto::UNDEFINED || (!p.has_tensor_value() && !p.has_sequence_value()))
    return TypedTensor::EmptyOptional(dtype);
  return Status::InvalidInput("optional '" + p.name() + "' holds a " + std::to_string(p.elem_type()) + " value; the executor reads tensors and sequences");
}

}  // namespace

ValueKind KindOfType(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return ValueKind::kSequence;
  if (type.has_optional_type()) return ValueKind::kOptional;
  return ValueKind::kTensor;
}

DType ElementTypeOf(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return ElementTypeOf(type.sequence_type().elem_type());
  if (type.has_optional_type()) return ElementTypeOf(type.optional_type().elem_type());
  return type.has_tensor_type() ? DTypeOfOnnx(type.tensor_type().elem_type()) : DType::kUndefined;
}

Result<TypedTensor> ReadValueFile(const std::string& path, ValueKind kind, DType dtype) {
  if (kind == ValueKind::kTensor) return ReadTensorFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  Result<TypedTensor> value = Status::InvalidInput("");
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromIstream(&in)) return Status::InvalidInput(path + " is not an ONNX SequenceProto file");
    value = SequenceFromProto(proto, dtype);
  } else {
    onnx::OptionalProto proto;
    if (!proto.ParseFromIstream(&in)) return Status::InvalidInput(path + " is not an ONNX OptionalProto file");
    value = OptionalFromProto(proto, dtype);
  }
  if (!value.ok()) return value.status().WithContext(path);
  return value;
}

nlohmann::json AttributeJson(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::FLOAT: return a.f();
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default: return nullptr;  // tensors and graphs: read where an op needs them
  }
}

}  // namespace tilebank::engine::model
