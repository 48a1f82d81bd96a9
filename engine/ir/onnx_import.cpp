#include "engine/ir/onnx_import.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "engine/core/heap_blocks.h"
#include "engine/ir/constant_eval.h"
#include "engine/ir/contrib_quantized_lowering.h"
#include "engine/ir/einsum_lowering.h"
#include "engine/ir/node_attributes.h"
#include "engine/ir/shape_data_propagators.h"
#include "engine/ir/tensor_proto.h"
#include "base/child_process.h"

namespace tilebank::engine::model {

namespace {

namespace fs = std::filesystem;

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string t;
  for (size_t i = 0; i < dims.size(); ++i) t += (i ? "," : "") + std::to_string(dims[i]);
  return t;
}

Status ReadModelProto(const std::string& path, onnx::ModelProto* model) {
  std::error_code ec;  // a path the user cannot look into is "cannot read", never an exception
  if (!fs::is_regular_file(path, ec)) return Status::NotFound("cannot read model " + path + (ec ? ": " + ec.message() : ""));
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return Status::NotFound("cannot read model " + path);
  bool parsed;
  {
    google::protobuf::io::FileInputStream stream(fd);
    parsed = model->ParseFromZeroCopyStream(&stream);
  }
  close(fd);
  // A truncated file usually fails to parse; one cut at a field boundary (or an empty file)
  // parses into a model without a graph or opset.
  if (!parsed || model->ir_version() <= 0 || !model->has_graph() || model->opset_import_size() == 0)
    return Status::InvalidInput(path + " is not an ONNX model (or it is truncated)");
  return Status::Ok();
}

// An external-data byte count ("offset", "length"): decimal digits only, as ONNX writes them.
std::optional<int64_t> ByteCount(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// Reads every tensor stored in external files beside the model into raw_data.
Status LoadExternalData(onnx::TensorProto* t, const fs::path& model_dir, const std::string& model_path) {
  if (t->data_location() != onnx::TensorProto::EXTERNAL) return Status::Ok();
  std::string location;
  for (const auto& kv : t->external_data())
    if (kv.key() == "location") location = kv.value();
  const std::string what = model_path + ": tensor '" + t->name() + "' stored in external file '" + location + "'";
  int64_t offset = 0, length = -1;
  for (const auto& kv : t->external_data()) {
    if (kv.key() != "offset" && kv.key() != "length") continue;
    const std::optional<int64_t> count = ByteCount(kv.value());
    if (!count) return Status::InvalidInput(what + ": its " + kv.key() + " '" + kv.value() + "' is not a byte count");
    (kv.key() == "offset" ? offset : length) = *count;
  }
  if (location.empty() || fs::path(location).is_absolute() || location.find("..") != std::string::npos)
    return Status::InvalidInput(what + ": the location must be a file name relative to the model");
  const fs::path file = model_dir / location;
  std::error_code error;
  const fs::file_status status = fs::status(file, error);
  if (!fs::exists(status)) return Status::NotFound(what + ", which does not exist");
  // A directory or a device has no byte count to trust (a directory reads as "huge").
  if (!fs::is_regular_file(status)) return Status::InvalidInput(what + ": it is not a regular file");
  const auto file_size = fs::file_size(file, error);
  std::ifstream in(file, std::ios::binary);
  if (error || !in) return Status::InvalidInput(what + ": it cannot be read");
  const int64_t size = static_cast<int64_t>(file_size);
  if (length < 0) length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    return Status::InvalidInput(what + ": the file is shorter than the tensor (" + std::to_string(size) + " bytes)");
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  t->set_raw_data(std::move(bytes));
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
  return Status::Ok();
}

Status LoadAllExternalData(onnx::ModelProto* model, const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  auto* graph = model->mutable_graph();
  for (auto& t : *graph->mutable_initializer()) TB_RETURN_IF_ERROR(LoadExternalData(&t, dir, path));
  for (auto& node : *graph->mutable_node())
    for (auto& a : *node.mutable_attribute())
      if (a.has_t()) TB_RETURN_IF_ERROR(LoadExternalData(a.mutable_t(), dir, path));
  return Status::Ok();
}

// Whether every value the graph reads is defined before it is read (a graph input, an
// initializer, an earlier node's output, or a value of an enclosing graph), no value is defined
// twice, and every graph output is defined: the checker of ONNX 1.12 lets some of these through,
// and its version converter and shape inference then dereference values that do not exist.
// Returns the first problem found, or "".
std::string WiringProblem(const onnx::GraphProto& g, std::set<std::string> defined, const std::string& where) {
  auto define = [&](const std::string& name, const std::string& by) -> std::string {
    if (name.empty()) return "";
    if (!defined.insert(name).second) return where + ": value '" + name + "' is defined twice (again by " + by + ")";
    return "";
  };
  std::set<std::string> outer = defined;
  defined.clear();
  for (const auto& t : g.initializer())
    if (auto p = define(t.name(), "an initializer"); !p.empty()) return p;
  for (const auto& in : g.input()) {
    if (defined.count(in.name())) continue;  // an initializer listed as an input
    if (auto p = define(in.name(), "a graph input"); !p.empty()) return p;
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string node = "node '" + (n.name().empty() ? n.op_type() + " #" + std::to_string(i) : n.name()) + "'";
    for (const auto& name : n.input())
      if (!name.empty() && !defined.count(name) && !outer.count(name))
        return where + ": " + node + " reads '" + name + "', which nothing before it defines";
    for (const auto& a : n.attribute()) {
      if (!a.has_g() && a.graphs_size() == 0) continue;
      // A subgraph sees every value of the graphs around it defined so far.
      std::set<std::string> visible = outer;
      visible.insert(defined.begin(), defined.end());
      if (a.has_g())
        if (auto p = WiringProblem(a.g(), visible, where + ", " + node + "'s attribute " + a.name()); !p.empty()) return p;
      for (const auto& sub : a.graphs())
        if (auto p = WiringProblem(sub, visible, where + ", " + node + "'s attribute " + a.name()); !p.empty()) return p;
    }
    for (const auto& name : n.output())
      if (auto p = define(name, node); !p.empty()) return p;
  }
  for (const auto& out : g.output())
    if (!defined.count(out.name()) && !outer.count(out.name())) return where + ": output '" + out.name() + "' is not computed by any node";
  return "";
}

int DefaultDomainOpset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  return 0;
}

// A sequence's or an optional's type: its kind, what an optional holds, and the innermost element
// type ("float32", ...; "" when not given). nullopt for a tensor, or a type not given.
struct NonTensorType {
  ValueKind kind = ValueKind::kSequence, contained = ValueKind::kTensor;
  std::string dtype;
};
std::optional<NonTensorType> NonTensor(const onnx::TypeProto& type) {
  NonTensorType t;
  t.kind = KindOfType(type);
  if (t.kind == ValueKind::kTensor) return std::nullopt;
  if (t.kind == ValueKind::kOptional) t.contained = KindOfType(type.optional_type().elem_type());
  if (const DType element = ElementTypeOf(type); element != DType::kUndefined) t.dtype = DTypeName(element);
  return t;
}

// Every value's sequence or optional type in `g` and the graphs of its nodes' attributes, by name.
void CollectNonTensorTypes(const onnx::GraphProto& g, std::map<std::string, onnx::TypeProto>* types) {
  for (const auto* infos : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& v : *infos)
      if (NonTensor(v.type())) (*types)[v.name()] = v.type();
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectNonTensorTypes(a.g(), types);
      for (const auto& sub : a.graphs()) CollectNonTensorTypes(sub, types);
    }
}

// Gives back the sequence and optional types libonnx 1.12's version converter drops from graph and
// subgraph inputs and outputs (their values are left with no type, which shape inference refuses).
void RestoreNonTensorTypes(onnx::GraphProto* g, const std::map<std::string, onnx::TypeProto>& types) {
  for (auto* infos : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
    for (auto& v : *infos)
      if (v.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
        if (auto it = types.find(v.name()); it != types.end()) *v.mutable_type() = it->second;
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RestoreNonTensorTypes(a.mutable_g(), types);
      for (auto& sub : *a.mutable_graphs()) RestoreNonTensorTypes(&sub, types);
    }
}

// Fixes the dynamic dimensions of the graph's runtime inputs: from `given` by name, else (for an
// input with a dynamic dim) from `by_position`, the shapes of the runtime inputs in order.
Status FixInputShapes(onnx::ModelProto* model, const std::map<std::string, std::vector<int64_t>>& given,
                      const std::vector<std::vector<int64_t>>& by_position, const std::string& path) {
  auto* graph = model->mutable_graph();
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  std::set<std::string> used;
  size_t position = 0;
  for (auto& input : *graph->mutable_input()) {
    if (initializers.count(input.name())) continue;
    const size_t index = position++;
    if (NonTensor(input.type())) {  // a sequence or optional: no shape to fix
      if (given.count(input.name())) return Status::InvalidInput("--input-shape names '" + input.name() + "', which is not a tensor");
      used.insert(input.name());
      continue;
    }
    if (!input.type().has_tensor_type()) return Status::InvalidInput(path + ": input '" + input.name() + "' is not a tensor, a sequence or an optional");
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    bool dynamic = !input.type().tensor_type().has_shape();
    for (const auto& dim : shape->dim()) dynamic = dynamic || !dim.has_dim_value() || dim.dim_value() <= 0;
    if (dynamic && !given.count(input.name()) && index < by_position.size() &&
        (shape->dim_size() == 0 || shape->dim_size() == static_cast<int>(by_position[index].size()))) {
      shape->clear_dim();
      for (int64_t d : by_position[index]) shape->add_dim()->set_dim_value(d);
      continue;
    }
    auto it = given.find(input.name());
    if (it != given.end()) {
      used.insert(input.name());
      if (shape->dim_size() != static_cast<int>(it->second.size()) && shape->dim_size() != 0)
        return Status::InvalidInput("--input-shape " + input.name() + ":" + DimsText(it->second) + " has rank " + std::to_string(it->second.size()) +
                                    "; the model's input has rank " + std::to_string(shape->dim_size()));
      shape->clear_dim();
      for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
      continue;
    }
    for (int k = 0; k < shape->dim_size(); ++k) {
      const auto& dim = shape->dim(k);
      if (!dim.has_dim_value() || dim.dim_value() <= 0)
        return Status::InvalidInput(path + ": input '" + input.name() + "' has a dynamic dimension " + std::to_string(k) +
                                    (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : std::string()) +
                                    "; give its shape with --input-shape \"" + input.name() + ":d0,d1,...\"");
    }
  }
  for (const auto& [name, dims] : given)
    if (!used.count(name)) return Status::InvalidInput("--input-shape names '" + name + "', which is not an input of " + path);
  return Status::Ok();
}

// A Constant node's value.
Result<ConstTensor> ConstantValue(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "value") return ConstFromProto(a.t());
    if (a.name() == "value_float") return ConstTensor::Floats({}, {a.f()});
    if (a.name() == "value_floats") return ConstTensor::Floats({a.floats_size()}, {a.floats().begin(), a.floats().end()});
    if (a.name() == "value_int") return ConstTensor::Ints({}, {a.i()});
    if (a.name() == "value_ints") return ConstTensor::Ints({a.ints_size()}, {a.ints().begin(), a.ints().end()});
  }
  return Status::InvalidInput("Constant node '" + node.name() + "' has no value this executor reads");
}

class GraphBuilder {
 public:
  int Value(const std::string& name) {
    auto [it, added] = index_.emplace(name, static_cast<int>(graph_.values.size()));
    if (added) graph_.values.push_back({name, {}, "float32", std::nullopt});
    return it->second;
  }
  bool Has(const std::string& name) const { return index_.count(name) > 0; }
  void SetType(const onnx::ValueInfoProto& info) {
    if (auto non_tensor = NonTensor(info.type())) {  // never shape-known: the registry's kernels run it
      auto& v = graph_.values[Value(info.name())];
      v.kind = non_tensor->kind;
      v.contained = non_tensor->contained;
      v.dtype = non_tensor->dtype.empty() ? "undefined" : non_tensor->dtype;
      v.shape.clear();
      v.shape_known = false;
      known_.erase(info.name());
      non_tensor_.insert(info.name());
      return;
    }
    if (!info.type().has_tensor_type()) return;
    auto& v = graph_.values[Value(info.name())];
    const auto& tt = info.type().tensor_type();
    v.dtype = DtypeName(tt.elem_type());
    if (!tt.has_shape()) return;
    v.shape.clear();
    known_.insert(info.name());
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) {
        known_.erase(info.name());
        break;
      }
      v.shape.push_back(d.dim_value());
    }
  }
  bool Known(const std::string& name) const { return known_.count(name) > 0; }
  bool IsNonTensor(const std::string& name) const { return non_tensor_.count(name) > 0; }
  // Per value index: whether its shape is known.
  std::vector<bool> ShapeKnown() const {
    std::vector<bool> known(graph_.values.size(), false);
    for (const auto& [name, index] : index_) known[index] = known_.count(name) > 0;
    return known;
  }
  void MarkKnown(const std::string& name) { known_.insert(name); }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
  std::map<std::string, int> index_;
  std::set<std::string> known_;
  std::set<std::string> non_tensor_;  // sequences and optionals
};

}  // namespace

Result<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::string& text) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ';')) {
    if (item.empty()) continue;
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Status::InvalidInput("--input-shape: '" + item + "' is not name:d0,d1,...");
    std::vector<int64_t> dims;
    std::stringstream ds(item.substr(colon + 1));
    std::string d;
    while (std::getline(ds, d, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end || v <= 0) return Status::InvalidInput("--input-shape: dimension '" + d + "' of '" + item + "' is not a positive integer");
      dims.push_back(v);
    }
    shapes[item.substr(0, colon)] = dims;
  }
  return shapes;
}

namespace {

// Initializers of at least this many bytes leave the proto once they are constants of the graph:
// the weights are held once while the model is imported, not twice. Shape inference (later rounds)
// reads their types and dims, which stay; the small ones it may read the values of stay whole.
constexpr size_t kMovedInitializerBytes = 64 * 1024;

// Frees `t`'s data (its dims and type stay).
void DropTensorData(onnx::TensorProto* t) {
  delete t->release_raw_data();
  google::protobuf::RepeatedField<float>().Swap(t->mutable_float_data());
  google::protobuf::RepeatedField<int64_t>().Swap(t->mutable_int64_data());
  google::protobuf::RepeatedField<int32_t>().Swap(t->mutable_int32_data());
  google::protobuf::RepeatedField<double>().Swap(t->mutable_double_data());
}

// Bytes of data `t` holds in the proto.
size_t TensorDataBytes(const onnx::TensorProto& t) {
  return t.raw_data().size() + sizeof(float) * t.float_data_size() + sizeof(int64_t) * t.int64_data_size() + sizeof(int32_t) * t.int32_data_size() +
         sizeof(double) * t.double_data_size();
}

// Set on an initializer the child process sends back without its data (OnnxPasses): the parent,
// which read the model, holds that data and puts it back (ApplyAnswer).
constexpr const char* kDataInParent = "tilebank: data held by the parent";

// Swaps the data of two tensors; their names, dims and types stay.
void SwapTensorData(onnx::TensorProto* a, onnx::TensorProto* b) {
  std::string* a_raw = a->release_raw_data();  // null where not set: raw_data's presence moves too
  a->set_allocated_raw_data(b->release_raw_data());
  b->set_allocated_raw_data(a_raw);
  a->mutable_float_data()->Swap(b->mutable_float_data());
  a->mutable_int32_data()->Swap(b->mutable_int32_data());
  a->mutable_int64_data()->Swap(b->mutable_int64_data());
  a->mutable_double_data()->Swap(b->mutable_double_data());
  a->mutable_uint64_data()->Swap(b->mutable_uint64_data());
  a->mutable_string_data()->Swap(b->mutable_string_data());
}

// ONNX's shape inference with data propagation on `model`, from its (fixed) input shapes; the
// answer as OnnxPasses describes it.
Result<std::string> InferShapes(onnx::ModelProto& model, bool send_whole, const std::string& path) {
  RegisterShapeDataPropagators();
  auto* g = model.mutable_graph();
  g->clear_value_info();  // inferred again from the fixed input shapes
  for (auto& out : *g->mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    std::unordered_map<std::string, onnx::TensorShapeProto> propagated;
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions{true, 1, true}, &propagated);
  } catch (const std::exception& strict_error) {
    // libonnx's inference fails on some shape arithmetic it cannot follow (a Concat of shapes it
    // has not propagated); without its strict mode those values stay unknown and the kernels
    // size them per run. A model that still fails is refused with the strict message.
    g->clear_value_info();
    try {
      std::unordered_map<std::string, onnx::TensorShapeProto> propagated;
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions{true, 0, true}, &propagated);
    } catch (const std::exception&) {
      return Status::InvalidInput(path + ": shape inference failed: " + strict_error.what());
    }
  }
  if (send_whole) return "C" + model.SerializeAsString();
  onnx::GraphProto typed;
  *typed.mutable_input() = g->input();
  *typed.mutable_output() = g->output();
  *typed.mutable_value_info() = g->value_info();
  return "S" + typed.SerializeAsString();
}

// IR version 3 required every initializer to be listed among the graph's inputs; models of that
// era that list only the runtime inputs fail ONNX's checker, and ONNX Runtime reads them. Such a
// model is read as IR version 4, where an initializer not listed is a constant: what it meant.
void ReadOldIrInitializersAsConstants(onnx::ModelProto* model) {
  if (model->ir_version() >= 4) return;
  std::set<std::string> inputs;
  for (const auto& in : model->graph().input()) inputs.insert(in.name());
  for (const auto& t : model->graph().initializer())
    if (!inputs.count(t.name())) {
      model->set_ir_version(4);
      return;
    }
}

// `model` converted to the executor's opset without carrying its large initializers' data through
// libonnx's converter (which copies every tensor twice) or back to the parent (which holds it): the
// data is set aside, and each such initializer comes back marked kDataInParent, with no data, where
// the converter kept it as it was. Where it did not (an adapter dropped or rewrote one), the model
// is converted again whole. Throws what the converter throws.
onnx::ModelProto ConvertKeepingWeights(onnx::ModelProto& model) {
  std::map<std::string, onnx::TensorProto> aside;  // name -> the data set aside
  std::map<std::string, const onnx::TensorProto*> stripped;
  for (auto& t : *model.mutable_graph()->mutable_initializer())
    if (TensorDataBytes(t) >= kMovedInitializerBytes && !aside.count(t.name())) {
      SwapTensorData(&t, &aside[t.name()]);
      stripped[t.name()] = &t;
    }
  onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(model, kExecutorOpset);
  size_t kept = 0;
  for (auto& t : *converted.mutable_graph()->mutable_initializer()) {
    auto it = stripped.find(t.name());
    if (it == stripped.end() || !t.doc_string().empty()) continue;
    const onnx::TensorProto& was = *it->second;
    if (TensorDataBytes(t) != 0 || t.data_type() != was.data_type() || t.dims_size() != was.dims_size() ||
        !std::equal(t.dims().begin(), t.dims().end(), was.dims().begin()))
      break;
    t.set_doc_string(kDataInParent);
    ++kept;
  }
  if (kept == aside.size()) return converted;
  for (auto& t : *model.mutable_graph()->mutable_initializer())
    if (auto it = aside.find(t.name()); it != aside.end() && stripped[t.name()] == &t) SwapTensorData(&t, &it->second);
  return onnx::version_conversion::ConvertVersion(model, kExecutorOpset);
}

// libonnx's own passes over the model: check_model, conversion to the executor's opset, shape
// inference with data propagation. What changed comes back as bytes: the whole model when it was
// converted (kept: 'C'), else only the graph's inputs, outputs and inferred value_info ('S'), so the
// weights are not copied. Runs in the child process (libonnx only: tilebank's own checks run in the
// parent, where a sanitizer sees them): `model` is the child's own copy of the parent's.
Result<std::string> OnnxPasses(onnx::ModelProto& model, const std::string& path) {
  // libonnx 1.12's checker requires a shape on every tensor the main graph declares; later ONNX
  // releases and ONNX Runtime take a declared output or value of unknown rank. Such a declaration
  // is checked with an empty shape, and left without one for shape inference.
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (auto* list : {model.mutable_graph()->mutable_input(), model.mutable_graph()->mutable_output(), model.mutable_graph()->mutable_value_info()})
    for (auto& v : *list)
      if (v.type().has_tensor_type() && !v.type().tensor_type().has_shape()) shapeless.push_back(v.mutable_type()->mutable_tensor_type());
  for (auto* t : shapeless) t->mutable_shape();
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return Status::InvalidInput(path + " fails the ONNX checker: " + e.what());
  }
  for (auto* t : shapeless) t->clear_shape();
  const int opset = DefaultDomainOpset(model);
  const bool convert = opset != kExecutorOpset;
  if (convert) {
    if (opset > kExecutorOpset)
      return Status::InvalidInput(path + " uses opset " + std::to_string(opset) + "; this executor implements opset " + std::to_string(kExecutorOpset));
    std::map<std::string, onnx::TypeProto> non_tensor_types;
    CollectNonTensorTypes(model.graph(), &non_tensor_types);
    try {
      model = ConvertKeepingWeights(model);
    } catch (const std::exception& e) {
      return Status::InvalidInput(path + ": converting opset " + std::to_string(opset) + " to " + std::to_string(kExecutorOpset) + " failed: " + e.what());
    }
    RestoreNonTensorTypes(model.mutable_graph(), non_tensor_types);
  }
  return InferShapes(model, convert, path);
}

}  // namespace

namespace {

// Applies the child's answer (see OnnxPasses) to `model`.
Status ApplyAnswer(const std::string& answer, onnx::ModelProto* model, const std::string& path) {
  if (answer.empty()) return Status::InvalidInput(path + ": the checked model did not come back whole");
  if (answer[0] == 'C') {
    onnx::ModelProto converted;
    if (!converted.ParseFromArray(answer.data() + 1, static_cast<int>(answer.size() - 1)))
      return Status::InvalidInput(path + ": the checked model did not come back whole");
    // The initializers the child sent without their data take it from the model read here.
    std::map<std::string, onnx::TensorProto*> read;
    for (auto& t : *model->mutable_graph()->mutable_initializer()) read.emplace(t.name(), &t);
    for (auto& t : *converted.mutable_graph()->mutable_initializer()) {
      if (t.doc_string() != kDataInParent) continue;
      auto it = read.find(t.name());
      if (it == read.end()) return Status::InvalidInput(path + ": the converted model names an initializer '" + t.name() + "' the model does not have");
      SwapTensorData(&t, it->second);
      t.clear_doc_string();
    }
    *model = std::move(converted);
  }
  if (answer[0] == 'S') {
    onnx::GraphProto typed;
    if (!typed.ParseFromArray(answer.data() + 1, static_cast<int>(answer.size() - 1)))
      return Status::InvalidInput(path + ": the inferred shapes did not come back whole");
    auto* g = model->mutable_graph();
    *g->mutable_input() = typed.input();
    *g->mutable_output() = typed.output();
    *g->mutable_value_info() = typed.value_info();
  }
  return Status::Ok();
}

// Initializers' data moved out of the proto, by name: the graph's constants, carried from one
// round's graph to the next (see ImportOnnx).
using MovedConstants = std::map<std::string, ConstTensor>;

struct ImportedGraph {
  Graph graph;
  std::vector<bool> shape_known;  // per value
  std::string first_unknown;      // the refusal naming the first node output of unknown shape; "" when none
};

// The executor's graph of a checked, shape-inferred model, marking values of unknown shape. Large
// initializers' data moves from `model` into the graph; one whose data moved in an earlier round
// comes from `moved`.
Result<ImportedGraph> BuildGraph(onnx::ModelProto* model, const std::string& path, MovedConstants* moved) {
  onnx::GraphProto* g = model->mutable_graph();
  GraphBuilder b;
  Graph& graph = b.graph();
  graph.opset = kExecutorOpset;
  for (auto& t : *g->mutable_initializer()) {
    Result<ConstTensor> c = Status::Ok();
    if (auto it = moved->find(t.name()); it != moved->end() && TensorDataBytes(t) == 0) {
      c = std::move(it->second);
      moved->erase(it);
    } else {
      c = ConstFromProto(t);
      if (!c.ok()) return c.status().WithContext(path);
      // A 0-D or 1-D integer tensor stays whole: shape inference's data propagation reads those.
      const bool shape_like = t.dims_size() <= 1 && (t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32);
      if (TensorDataBytes(t) >= kMovedInitializerBytes && !shape_like) DropTensorData(&t);
    }
    auto& v = graph.values[b.Value(t.name())];
    v.shape = c->shape;
    v.dtype = DtypeName(t.data_type());
    v.constant = std::move(c.value());
    b.MarkKnown(t.name());
  }
  for (const auto& in : g->input()) {
    if (b.Has(in.name()) && graph.values[b.Value(in.name())].constant) continue;  // an initializer listed as an input
    b.SetType(in);
    graph.inputs.push_back(b.Value(in.name()));
  }
  for (const auto& info : g->value_info()) b.SetType(info);
  for (const auto& out : g->output()) b.SetType(out);
  std::string first_unknown;
  for (int i = 0; i < g->node_size(); ++i) {
    const auto& n = g->node(i);  // of the ONNX domain: ImportOnnx refused the others
    if (n.op_type() == "Constant") {
      auto c = ConstantValue(n);
      if (!c.ok()) return c.status().WithContext(path);
      auto& v = graph.values[b.Value(n.output(0))];
      v.shape = c->shape;
      v.dtype = c->type == ConstTensor::Type::kFloat ? "float32" : "int64";
      for (const auto& a : n.attribute())
        if (a.name() == "value") v.dtype = DtypeName(a.t().data_type());  // the tensor's own type (int32, bool, float64, ...)
      v.constant = std::move(c.value());
      b.MarkKnown(n.output(0));
      continue;
    }
    Node node;
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    node.op_type = n.op_type();
    for (const auto& name : n.input()) node.inputs.push_back(name.empty() ? -1 : b.Value(name));
    for (const auto& name : n.output()) {
      node.outputs.push_back(name.empty() ? -1 : b.Value(name));
      if (!name.empty() && !b.Known(name) && !b.IsNonTensor(name) && first_unknown.empty())
        first_unknown = path + ": the shape of '" + name + "' (output of node '" + node.name + "', " + n.op_type() + ") is unknown after shape inference";
    }
    auto attributes = ReadNodeAttributes(n);
    if (!attributes.ok()) return attributes.status().WithContext(path);
    node.attrs = std::move(attributes->attrs);
    node.tensor_attrs = std::move(attributes->tensors);
    node.graphs = std::move(attributes->graphs);
    node.implicit_inputs = std::move(attributes->implicit_inputs);
    for (const std::string& name : node.implicit_inputs) node.inputs.push_back(b.Value(name));
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::TENSOR && n.op_type() == "ConstantOfShape" && a.name() == "value") {
        auto c = ConstFromProto(a.t());
        if (!c.ok() || c->size() != 1) return Status::InvalidInput(path + ": node '" + node.name + "': ConstantOfShape's value must be one number");
        node.attrs["value"] = c->At(0);
        node.attrs["value_is_float"] = c->type == ConstTensor::Type::kFloat;
      }
    }
    graph.nodes.push_back(std::move(node));
  }
  for (const auto& out : g->output()) graph.outputs.push_back(b.Value(out.name()));
  std::vector<bool> known = b.ShapeKnown();
  return ImportedGraph{std::move(graph), std::move(known), std::move(first_unknown)};
}

// Replaces each node of `model` whose outputs `graph` now holds as constants by initializers, so
// that ONNX's next shape inference reads them. Returns how many nodes were replaced.
int ReplaceFoldedNodes(onnx::ModelProto* model, const Graph& graph) {
  std::map<std::string, int> index;
  for (size_t v = 0; v < graph.values.size(); ++v) index[graph.values[v].name] = static_cast<int>(v);
  std::set<std::string> outputs;
  for (const auto& out : model->graph().output()) outputs.insert(out.name());
  auto* g = model->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  int replaced = 0;
  for (auto& n : *g->mutable_node()) {
    std::vector<onnx::TensorProto> values;
    bool folded = n.op_type() != "Constant" && n.output_size() > 0;
    for (const auto& name : n.output()) {
      auto it = index.find(name);
      if (name.empty() || it == index.end() || !graph.IsConstant(it->second) || outputs.count(name)) {
        folded = false;
        break;
      }
      auto proto = ProtoFromConst(name, *graph.values[it->second].constant, graph.values[it->second].dtype);
      if (!proto.ok()) {
        folded = false;
        break;
      }
      values.push_back(std::move(proto.value()));
    }
    if (!folded) {
      *kept.Add() = std::move(n);
      continue;
    }
    for (auto& t : values) {
      if (model->ir_version() < 4) {  // before IR 4 an initializer must also be a graph input
        auto* input = g->add_input();
        input->set_name(t.name());
        auto* tt = input->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
      *g->add_initializer() = std::move(t);
    }
    ++replaced;
  }
  g->mutable_node()->Swap(&kept);
  return replaced;
}

}  // namespace

namespace {

DeclaredTensor Declared(const onnx::ValueInfoProto& v) {
  DeclaredTensor t;
  t.name = v.name();
  if (auto non_tensor = NonTensor(v.type())) {
    t.kind = non_tensor->kind;
    t.dtype = non_tensor->dtype;
    return t;
  }
  if (!v.type().has_tensor_type()) {
    t.rank_known = false;
    return t;
  }
  const auto& tensor = v.type().tensor_type();
  if (tensor.elem_type() != 0) t.dtype = DTypeName(DTypeOfOnnx(tensor.elem_type()));
  t.rank_known = tensor.has_shape();
  for (const auto& dim : tensor.shape().dim()) {
    const bool fixed = dim.has_dim_value() && dim.dim_value() > 0;
    t.dims.push_back(fixed ? dim.dim_value() : -1);
    t.params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
  }
  return t;
}

}  // namespace

Status ReadOnnxModel(const std::string& path, onnx::ModelProto* model) {
  TB_RETURN_IF_ERROR(ReadModelProto(path, model));
  return LoadAllExternalData(model, path);
}

Status ReadOnnxModelProto(const std::string& path, onnx::ModelProto* model) { return ReadModelProto(path, model); }

Status LoadExternalTensors(onnx::ModelProto* model, const std::string& path) { return LoadAllExternalData(model, path); }

Result<ModelSignature> ReadModelSignature(const std::string& path) {
  onnx::ModelProto model;
  TB_RETURN_IF_ERROR(ReadModelProto(path, &model));
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  ModelSignature s;
  for (const auto& input : model.graph().input())
    if (!initializers.count(input.name())) s.inputs.push_back(Declared(input));
  for (const auto& output : model.graph().output()) s.outputs.push_back(Declared(output));
  return s;
}

namespace {

// Whether another round of shape inference can learn a shape from this round's folding: some node
// whose output shape is unknown (where inference stopped) reads a value the folding made constant,
// or an integer value of at most one axis computed from one (ONNX's data propagation carries such
// values on: a Concat of a folded size and a shape known only per run). A node stopped on values
// known only when the model runs (NonZero's count, the boxes before it) reads neither, and
// inferring the whole model again would tell nothing new.
bool FoldingMayTellShapes(const Graph& graph, const std::vector<bool>& shape_known, const std::vector<bool>& was_constant) {
  const size_t count = graph.values.size();
  std::vector<bool> from_folded(count, false);
  for (size_t v = 0; v < count; ++v) from_folded[v] = graph.values[v].constant.has_value() && !was_constant[v];
  auto carried = [&](int v) {  // a value data propagation can carry: integers, at most one axis (or of unknown shape)
    const Value& value = graph.values[v];
    if (value.dtype != "int64" && value.dtype != "int32") return false;
    const bool known = v < static_cast<int>(shape_known.size()) && shape_known[v];
    return !known || value.shape.size() <= 1;
  };
  for (const Node& n : graph.nodes) {  // in graph order: producers before readers
    bool reads = false, stopped = false;
    for (int v : n.inputs) reads = reads || (v >= 0 && from_folded[v]);
    for (int v : n.outputs) stopped = stopped || (v >= 0 && !graph.values[v].constant.has_value() && !(v < static_cast<int>(shape_known.size()) && shape_known[v]));
    if (reads && stopped) return true;
    if (reads)
      for (int v : n.outputs)
        if (v >= 0 && carried(v)) from_folded[v] = true;
  }
  return false;
}

}  // namespace

Result<Graph> ImportOnnx(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                         const std::vector<std::vector<int64_t>>& shapes_by_position, LoadPhases* phases) {
  PrepareHeapForLoading();  // before the weights are read: each large buffer reuses the last one's pages, or returns them
  // libonnx builds its registry of every op's schema on first use (30-40 ms): built on the other
  // core while the model is read, once a process, so that each child process of the passes below
  // inherits it instead of building it again.
  std::jthread schemas([] { static const bool built = onnx::OpSchemaRegistry::Schema("Add", kExecutorOpset, "") != nullptr; (void)built; });
  PhaseClock clock;
  onnx::ModelProto model;
  TB_RETURN_IF_ERROR(ReadModelProto(path, &model));
  TB_RETURN_IF_ERROR(LoadAllExternalData(&model, path));
  clock.Lap(phases ? &phases->read : nullptr);
  LowerEinsums(model.mutable_graph(), DefaultDomainOpset(model));
  LowerContribQuantizedOps(&model);
  ReadOldIrInitializersAsConstants(&model);
  // ONNX's shape inference stops at shape arithmetic it does not propagate (Range, Mod, Where,
  // ScatterND, ...). Each round folds what became constant into initializers and infers again,
  // until every shape is known or the folding can tell no stopped node anything (FoldingMayTellShapes).
  constexpr int kMaxRounds = 64;
  // tilebank's own checks of the proto, here rather than in the child: the domains, the wiring, the
  // fixed input shapes.
  for (const auto& n : model.graph().node())
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      return Status::InvalidInput(path + ": node '" + n.name() + "' (" + n.op_type() + ") is of domain " + n.domain() + "; the executor runs the ONNX domain" +
                                  (n.domain() == "ai.onnx.preview.training" ? " (that one holds training ops, not inference)"
                                   : n.domain() == "com.microsoft"
                                       ? " (and of com.microsoft the quantized ops ONNX Runtime's quantizer writes, as "
                                         "engine/ir/contrib_quantized_lowering.h lists them, with the attributes it takes)"
                                       : ""));
  if (const std::string problem = WiringProblem(model.graph(), {}, path); !problem.empty()) return Status::InvalidInput(problem);
  TB_RETURN_IF_ERROR(FixInputShapes(&model, input_shapes, shapes_by_position, path));
  schemas.join();  // no thread but this one may run when the passes' child process is forked
  MovedConstants moved;
  for (int round = 0;; ++round) {
    // libonnx 1.12 crashes on some malformed models inside these passes: they run in a child process.
    auto passed = RunInChildProcess(
        [&]() { return round == 0 ? OnnxPasses(model, path) : InferShapes(model, false, path); },
        path + ": libonnx's checker, opset conversion or shape inference");
    if (!passed.ok()) return passed.status();
    TB_RETURN_IF_ERROR(ApplyAnswer(passed.value(), &model, path));
    clock.Lap(phases ? &phases->onnx_passes : nullptr);
    auto built = BuildGraph(&model, path, &moved);
    if (!built.ok()) return built.status();
    if (built->first_unknown.empty()) {
      clock.Lap(phases ? &phases->graph : nullptr);
      return std::move(built->graph);
    }
    std::vector<bool> was_constant(built->graph.values.size());
    for (size_t v = 0; v < was_constant.size(); ++v) was_constant[v] = built->graph.values[v].constant.has_value();
    auto folded = EvaluateConstantNodes(&built->graph, &built->shape_known);
    if (!folded.ok()) return folded.status().WithContext(path);
    if (FoldingMayTellShapes(built->graph, built->shape_known, was_constant) && ReplaceFoldedNodes(&model, built->graph) != 0 &&
        round + 1 < kMaxRounds) {
      // Another round: the weights whose data left the proto go on to its graph.
      std::set<std::string> dropped;
      for (const auto& t : model.graph().initializer())
        if (TensorDataBytes(t) == 0) dropped.insert(t.name());
      for (Value& v : built->graph.values)
        if (v.constant && dropped.count(v.name)) moved[v.name] = std::move(*v.constant);
      clock.Lap(phases ? &phases->graph : nullptr);
      continue;
    }
    {
      // Shapes that depend on input values: known per run, when the registry's kernels compute them.
      for (size_t v = 0; v < built->graph.values.size(); ++v)
        if (v < built->shape_known.size() && !built->shape_known[v] && !built->graph.values[v].constant) {
          built->graph.values[v].shape_known = false;
          built->graph.values[v].shape.clear();
        }
      clock.Lap(phases ? &phases->graph : nullptr);
      return std::move(built->graph);
    }
  }
}

}  // namespace tilebank::engine::model
