#include "engine/model/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <map>

namespace tilebank::engine::model {

namespace {

template <typename T, typename Field>
std::vector<T> FromRawOrField(const onnx::TensorProto& p, const Field& field, size_t raw_element_bytes, int64_t count, bool* ok) {
  std::vector<T> out;
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    *ok = raw.size() == static_cast<size_t>(count) * raw_element_bytes;
    if (!*ok) return out;
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
    default: return "type " + std::to_string(t);
  }
}

Result<ConstTensor> ConstFromProto(const onnx::TensorProto& p) {
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status::InvalidInput("tensor '" + p.name() + "' has a negative dimension");
    count *= d;
  }
  bool ok = true;
  ConstTensor c;
  c.shape = shape;
  switch (p.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (p.has_raw_data()) {
        ok = p.raw_data().size() == static_cast<size_t>(count) * sizeof(float);
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
        ok = p.raw_data().size() == static_cast<size_t>(count) * sizeof(double);
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
      c.type = ConstTensor::Type::kInt;
      c.ints = FromRawOrField<int64_t>(p, p.int32_data(), 1, count, &ok);
      if (p.data_type() != onnx::TensorProto::INT8)
        for (auto& v : c.ints) v = static_cast<uint8_t>(v);
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
  if (dtype == "float32") {
    p.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t i = 0; i < n; ++i) p.add_float_data(static_cast<float>(c.At(i)));
  } else if (dtype == "float64") {
    p.set_data_type(onnx::TensorProto::DOUBLE);
    for (int64_t i = 0; i < n; ++i) p.add_double_data(c.At(i));
  } else if (dtype == "int64") {
    p.set_data_type(onnx::TensorProto::INT64);
    for (int64_t i = 0; i < n; ++i) p.add_int64_data(static_cast<int64_t>(c.At(i)));
  } else {
    static const std::map<std::string, int> int32_fields = {{"int32", onnx::TensorProto::INT32}, {"int16", onnx::TensorProto::INT16},
                                                            {"int8", onnx::TensorProto::INT8},   {"uint8", onnx::TensorProto::UINT8},
                                                            {"bool", onnx::TensorProto::BOOL}};
    auto it = int32_fields.find(dtype);
    if (it == int32_fields.end()) return Status::InvalidInput("tensor '" + name + "': " + dtype + " constants are not written");
    p.set_data_type(it->second);
    for (int64_t i = 0; i < n; ++i) p.add_int32_data(dtype == "bool" ? c.At(i) != 0 : static_cast<int32_t>(c.At(i)));
  }
  return p;
}

Result<Tensor> ReadFloatTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in)) return Status::InvalidInput(path + " is not an ONNX TensorProto file");
  if (proto.data_type() != onnx::TensorProto::FLOAT)
    return Status::InvalidInput(path + " holds " + DtypeName(proto.data_type()) + " data; the executor reads float32");
  auto c = ConstFromProto(proto);
  if (!c.ok()) return c.status().WithContext(path);
  Tensor t;
  t.shape = c->shape;
  t.data = std::move(c->floats);
  return t;
}

}  // namespace tilebank::engine::model
