#include "python/native/model_file.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "engine/core/dtype.h"
#include "engine/ir/model_metadata.h"
#include "python/native/errors.h"
#include "python/native/ndarray.h"

namespace tilebank::python {

namespace py = pybind11;

namespace {

// {'name', 'type', 'shape'}: shape None when the rank is unknown, else per dim its value, its
// symbolic name or None; 'denotations' per dim.
py::dict ValueDict(const engine::model::DeclaredValue& v) {
  py::dict d;
  d["name"] = v.name;
  d["type"] = v.type;
  if (!v.rank_known) {
    d["shape"] = py::none();
  } else {
    py::list shape;
    for (size_t i = 0; i < v.dims.size(); ++i) {
      if (v.dims[i] >= 0) shape.append(v.dims[i]);
      else if (!v.params[i].empty()) shape.append(v.params[i]);
      else shape.append(py::none());
    }
    d["shape"] = shape;
  }
  d["denotations"] = v.denotations;
  return d;
}

py::list ValueList(const std::vector<engine::model::DeclaredValue>& values) {
  py::list out;
  for (const auto& v : values) out.append(ValueDict(v));
  return out;
}

py::dict MetadataDict(const std::string& path) {
  const auto m = ValueOrRaise(engine::model::ReadModelMetadata(path));
  py::dict d;
  d["producer_name"] = m.producer_name;
  d["producer_version"] = m.producer_version;
  d["graph_name"] = m.graph_name;
  d["domain"] = m.domain;
  d["description"] = m.description;
  d["graph_description"] = m.graph_description;
  d["version"] = m.version;
  d["custom_metadata_map"] = m.custom;
  d["inputs"] = ValueList(m.inputs);
  d["outputs"] = ValueList(m.outputs);
  d["overridable_initializers"] = ValueList(m.overridable_initializers);
  return d;
}

// An array's tensor in the dtype numpy gives it; strings (numpy's str, bytes or object) as ONNX strings.
engine::TypedTensor TensorOfArray(const py::handle& object, const std::string& what) {
  py::array array = py::array::ensure(object);
  if (!array) Raise(Status::InvalidInput(what + " is not an array"));
  const char kind = array.dtype().kind();
  if (kind == 'U' || kind == 'S' || kind == 'O') return TensorFromArray(array, engine::DType::kString, what);
  auto dtype = engine::ParseDType(std::string(py::str(array.dtype())));
  if (!dtype) Raise(Status::InvalidInput(what + " has numpy dtype " + std::string(py::str(array.dtype())) + ", which ONNX has no type for"));
  return TensorFromArray(array, *dtype, what);
}

void WriteWithInitializers(const std::string& path, const py::dict& initializers, const std::string& out_path) {
  std::map<std::string, engine::TypedTensor> replaced;
  for (const auto& [key, value] : initializers) {
    const std::string name = py::str(key);
    replaced.emplace(name, TensorOfArray(value, "initializer '" + name + "'"));
  }
  Status status;
  {
    py::gil_scoped_release release;
    status = engine::model::WriteModelWithInitializers(path, replaced, out_path);
  }
  ThrowIfError(status);
}

}  // namespace

void RegisterModelFile(py::module_& m) {
  m.def("model_metadata", &MetadataDict, py::arg("path"),
        "a model file's metadata: {'producer_name', 'producer_version', 'graph_name', 'domain', 'description', 'graph_description', "
        "'version', 'custom_metadata_map', 'inputs', 'outputs', 'overridable_initializers'}; each value {'name', 'type' (ONNX Runtime's "
        "spelling), 'shape' (ints, symbolic names, None; None when the rank is unknown), 'denotations'}");
  m.def("write_model_with_initializers", &WriteWithInitializers, py::arg("path"), py::arg("initializers"), py::arg("out_path"),
        "writes path's model to out_path, self-contained, with the named initializers' data replaced by the given arrays");
}

}  // namespace tilebank::python
