#include "python/native/session.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "engine/kernels/kernel_registry.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/onnx_import.h"
#include "engine/core/host_bank.h"
#include "engine/core/soc_version.h"
#include "engine/core/threads.h"
#include "python/native/errors.h"
#include "python/native/ndarray.h"
#include "repo/bank.h"

namespace tilebank::python {

namespace py = pybind11;
using engine::TypedTensor;
using engine::model::DeclaredTensor;
using engine::model::Executor;

namespace {

py::dict DeclaredDict(const DeclaredTensor& t) {
  py::list shape;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] > 0) shape.append(t.dims[i]);
    else if (!t.params[i].empty()) shape.append(t.params[i]);
    else shape.append(py::none());
  }
  py::dict d;
  d["name"] = t.name;
  d["shape"] = t.rank_known ? py::object(shape) : py::object(py::none());
  d["dtype"] = t.dtype;
  return d;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + (dims[i] > 0 ? std::to_string(dims[i]) : std::string("?"));
  return text + "]";
}

class InferenceSession {
 public:
  InferenceSession(const std::string& path, const std::optional<std::string>& bank_root, const std::optional<std::string>& soc,
                   std::optional<int> threads)
      : path_(path) {
    if (threads) {
      if (*threads < 1) Raise(Status::InvalidInput("threads must be at least 1"));
      engine::SetLibraryThreads(*threads);
    }
    signature_ = ValueOrRaise(engine::model::ReadModelSignature(path));
    bank_ = ValueOrRaise(OpenBankToRun(bank_root.value_or(""), soc.value_or("")));
    bool all_fixed = true;
    for (const auto& in : signature_.inputs)
      for (int64_t d : in.dims) all_fixed = all_fixed && in.rank_known && d > 0;
    for (const auto& in : signature_.inputs) all_fixed = all_fixed && in.rank_known;
    if (all_fixed) {  // bound now, so a model the executor cannot run fails here, as in ONNX Runtime
      std::vector<std::vector<int64_t>> shapes;
      for (const auto& in : signature_.inputs) shapes.push_back(in.dims);
      Bound(shapes);
    }
  }

  py::list GetInputs() const {
    py::list out;
    for (const auto& t : signature_.inputs) out.append(DeclaredDict(t));
    return out;
  }
  py::list GetOutputs() const {
    py::list out;
    for (const auto& t : signature_.outputs) out.append(DeclaredDict(t));
    return out;
  }

  py::list Run(const std::optional<std::vector<std::string>>& output_names, const py::dict& feeds) {
    std::vector<TypedTensor> inputs = Inputs(feeds);
    std::vector<size_t> picked = OutputIndices(output_names);
    auto lock = LockWithoutGil();
    Executor& ex = Bound(ShapesOf(inputs));
    std::vector<TypedTensor> outputs = RunWithoutGil(ex, inputs);
    py::list result;
    for (size_t i : picked) result.append(ObjectFromValue(std::move(outputs.at(i))));
    return result;
  }

  // Run, and each step's time of this run: (outputs, [{'name', 'op_type', 'time_us', 'template',
  // 'policy', 'source', 'layout'}]) in the order the steps ran, for ONNX Runtime's profile.
  py::tuple RunWithStepTimes(const std::optional<std::vector<std::string>>& output_names, const py::dict& feeds) {
    std::vector<TypedTensor> inputs = Inputs(feeds);
    std::vector<size_t> picked = OutputIndices(output_names);
    auto lock = LockWithoutGil();
    Executor& ex = Bound(ShapesOf(inputs));
    std::vector<double> node_us;
    std::vector<TypedTensor> outputs = RunWithoutGil(ex, inputs, &node_us);
    py::list result;
    for (size_t i : picked) result.append(ObjectFromValue(std::move(outputs.at(i))));
    py::list steps;
    for (size_t i = 0; i < ex.bindings().size() && i < node_us.size(); ++i) {
      const auto& b = ex.bindings()[i];
      py::dict step;
      step["name"] = b.name;
      step["op_type"] = b.op_type;
      step["time_us"] = node_us[i];
      step["template"] = b.template_id;
      step["policy"] = b.policy;
      step["source"] = b.policy_source;
      step["layout"] = b.layout.empty() ? "row-major" : b.layout;
      steps.append(step);
    }
    return py::make_tuple(result, steps);
  }

  // The model run on a test-data directory's inputs, its outputs judged against the expected ones as
  // `run --data` judges them (engine/runtime/model_session.h, JudgeTestData): {'ok', 'worst',
  // 'max_abs_error', 'max_rel_error', 'quantized_tolerance', 'bf16_tolerance', 'scale_tolerance'}.
  py::dict Check(const std::string& data_dir) {
    std::vector<engine::ValueKind> kinds;
    for (const auto& in : signature_.inputs) kinds.push_back(in.kind);
    auto lock = LockWithoutGil();
    Executor& ex = Bound(ValueOrRaise(engine::model::InputFileShapes(data_dir, kinds)));
    std::vector<TypedTensor> inputs = ValueOrRaise(engine::model::ReadTypedInputs(ex.graph(), data_dir));
    const int64_t draws_before = engine::kernels::RandomDraws();
    std::vector<TypedTensor> outputs = RunWithoutGil(ex, inputs);
    const auto c = ValueOrRaise(engine::model::JudgeTestData(ex, outputs, data_dir, engine::kernels::RandomDraws() > draws_before));
    py::dict out;
    out["ok"] = c.ok;
    out["worst"] = c.worst;
    out["max_abs_error"] = c.max_abs_error;
    out["max_rel_error"] = c.max_rel_error;
    out["quantized_tolerance"] = c.quantized_tolerance;
    out["bf16_tolerance"] = c.bf16_tolerance;
    out["scale_tolerance"] = c.scale_tolerance;
    return out;
  }

  // Each step's median time with its binding, from `repeat` timed runs after `warmup`.
  py::list Profile(const std::optional<py::dict>& feeds, int warmup, int repeat) {
    auto lock = LockWithoutGil();
    auto [ex, inputs] = ExecutorAndInputs(feeds);
    auto timing = TimeWithoutGil(*ex, inputs, warmup, repeat);
    const double total_us = timing.median_ms * 1000;
    py::list rows;
    for (size_t i = 0; i < ex->bindings().size(); ++i) {
      const auto& b = ex->bindings()[i];
      py::dict row;
      row["name"] = b.name;
      row["op_type"] = b.op_type;
      row["shape"] = b.shape;
      row["time_us"] = i < timing.node_median_us.size() ? timing.node_median_us[i] : 0.0;
      row["share"] = total_us > 0 && i < timing.node_median_us.size() ? timing.node_median_us[i] / total_us : 0.0;
      row["template"] = b.template_id;
      row["policy"] = b.policy;
      row["source"] = b.policy_source;
      row["layout"] = b.layout.empty() ? "row-major" : b.layout;
      rows.append(row);
    }
    return rows;
  }

  py::dict Benchmark(const std::optional<py::dict>& feeds, int warmup, int repeat) {
    auto lock = LockWithoutGil();
    auto [ex, inputs] = ExecutorAndInputs(feeds);
    auto timing = TimeWithoutGil(*ex, inputs, warmup, repeat);
    py::dict out;
    out["median_ms"] = timing.median_ms;
    out["spread_ms"] = timing.spread_ms;
    out["runs"] = timing.runs;
    out["warmup"] = warmup;
    out["activations_bytes"] = ex->arena_bytes();
    out["weights_bytes"] = ex->constant_bytes();
    return out;
  }

  size_t BoundShapes() const { return executors_.size(); }

 private:
  std::vector<TypedTensor> Inputs(const py::dict& feeds) const {
    std::vector<TypedTensor> inputs;
    for (const auto& [key, value] : feeds) {
      const std::string name = py::str(key);
      bool known = false;
      for (const auto& in : signature_.inputs) known = known || in.name == name;
      if (!known) Raise(Status::InvalidInput("'" + name + "' is not an input of " + path_ + " (" + InputNames() + ")"));
    }
    for (const auto& in : signature_.inputs) {
      auto dtype = engine::ParseDType(in.dtype.empty() ? "float32" : in.dtype);
      if (!feeds.contains(in.name) && in.kind == engine::ValueKind::kOptional) {  // left out: an empty optional
        inputs.push_back(TypedTensor::EmptyOptional(dtype ? *dtype : engine::DType::kFloat32));
        continue;
      }
      if (!feeds.contains(in.name)) Raise(Status::InvalidInput("input '" + in.name + "' of " + path_ + " is missing (" + InputNames() + ")"));
      TypedTensor t = ValueFromObject(feeds[py::str(in.name)], in.kind, dtype ? *dtype : engine::DType::kFloat32, "input '" + in.name + "'");
      if (!t.IsTensor()) {  // a sequence or an optional: no declared shape to check
        inputs.push_back(std::move(t));
        continue;
      }
      if (in.rank_known && t.shape.size() != in.dims.size())
        Raise(Status::InvalidInput("input '" + in.name + "' has rank " + std::to_string(t.shape.size()) + "; the model declares " +
                                   DimsText(in.dims)));
      for (size_t k = 0; in.rank_known && k < in.dims.size(); ++k)
        if (in.dims[k] > 0 && in.dims[k] != t.shape[k])
          Raise(Status::InvalidInput("input '" + in.name + "' has shape " + DimsText(t.shape) + "; the model declares " + DimsText(in.dims)));
      inputs.push_back(std::move(t));
    }
    return inputs;
  }

  std::string InputNames() const {
    std::string names = "inputs:";
    for (const auto& in : signature_.inputs) names += " " + in.name;
    return names;
  }

  std::vector<size_t> OutputIndices(const std::optional<std::vector<std::string>>& names) const {
    std::vector<size_t> picked;
    if (!names) {
      for (size_t i = 0; i < signature_.outputs.size(); ++i) picked.push_back(i);
      return picked;
    }
    for (const auto& name : *names) {
      size_t i = 0;
      while (i < signature_.outputs.size() && signature_.outputs[i].name != name) ++i;
      if (i == signature_.outputs.size()) Raise(Status::InvalidInput("'" + name + "' is not an output of " + path_));
      if (std::find(picked.begin(), picked.end(), i) != picked.end()) Raise(Status::InvalidInput("output '" + name + "' is named twice"));
      picked.push_back(i);
    }
    return picked;
  }

  // The session's lock, waited for with the GIL released (a thread running the model releases the
  // GIL while it holds the lock).
  std::unique_lock<std::mutex> LockWithoutGil() {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    py::gil_scoped_release release;
    lock.lock();
    return lock;
  }

  // The executor's outputs for `inputs`, run with the GIL released; raises the run's error.
  static std::vector<TypedTensor> RunWithoutGil(Executor& ex, const std::vector<TypedTensor>& inputs, std::vector<double>* node_us = nullptr) {
    std::vector<TypedTensor> outputs;
    Status status;
    {
      py::gil_scoped_release release;
      std::vector<const TypedTensor*> in;
      for (const auto& t : inputs) in.push_back(&t);
      status = ex.Run(in, &outputs, node_us);
    }
    ThrowIfError(status);
    return outputs;
  }

  static std::vector<std::vector<int64_t>> ShapesOf(const std::vector<TypedTensor>& inputs) {
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& t : inputs) shapes.push_back(t.IsTensor() ? t.shape : std::vector<int64_t>{});  // a sequence or optional has none
    return shapes;
  }

  // The executor of these input shapes, bound (with the GIL released) on first use; the caller
  // holds the session's lock. At most kBoundShapes are kept: a new one beyond them replaces the one
  // used longest ago (a model fed many sequence lengths would otherwise hold a copy of its weights
  // per length).
  Executor& Bound(const std::vector<std::vector<int64_t>>& shapes) {
    ++use_clock_;
    auto it = executors_.find(shapes);
    if (it != executors_.end()) {
      last_use_[shapes] = use_clock_;
      return *it->second;
    }
    std::map<std::string, std::vector<int64_t>> by_name;
    for (size_t i = 0; i < shapes.size() && i < signature_.inputs.size(); ++i)
      if (signature_.inputs[i].kind == engine::ValueKind::kTensor) by_name[signature_.inputs[i].name] = shapes[i];
    Result<std::unique_ptr<Executor>> loaded = Status::Ok();
    {
      py::gil_scoped_release release;
      loaded = engine::model::LoadModel(path_, by_name, bank_.get(), {}, engine::model::LoadOptions{/*run_only=*/true});
    }
    auto executor = ValueOrRaise(std::move(loaded));
    if (executors_.size() >= kBoundShapes) {
      auto oldest = std::min_element(last_use_.begin(), last_use_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      executors_.erase(oldest->first);
      last_use_.erase(oldest);
    }
    last_use_[shapes] = use_clock_;
    return *executors_.emplace(shapes, std::move(executor)).first->second;
  }

  std::pair<Executor*, std::vector<TypedTensor>> ExecutorAndInputs(const std::optional<py::dict>& feeds) {
    if (feeds) {
      auto inputs = Inputs(*feeds);
      return {&Bound(ShapesOf(inputs)), std::move(inputs)};
    }
    if (executors_.empty())
      Raise(Status::InvalidInput(path_ + " has dynamic input dimensions: give the inputs to time (" + InputNames() + ")"));
    Executor* ex = executors_.begin()->second.get();
    return {ex, engine::model::RandomTypedInputs(ex->graph(), 1)};
  }

  // The caller holds the session's lock.
  engine::model::ModelTiming TimeWithoutGil(Executor& ex, const std::vector<TypedTensor>& inputs, int warmup, int repeat) {
    if (repeat < 1) Raise(Status::InvalidInput("repeat must be at least 1"));
    if (warmup < 0) Raise(Status::InvalidInput("warmup must not be negative"));
    Result<engine::model::ModelTiming> timing = Status::Ok();
    {
      py::gil_scoped_release release;
      timing = engine::model::TimeModel(ex, inputs, warmup, repeat);
    }
    return ValueOrRaise(std::move(timing));
  }

  std::string path_;
  engine::model::ModelSignature signature_;
  std::unique_ptr<Bank> bank_;
  static constexpr size_t kBoundShapes = 8;
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<Executor>> executors_;
  std::map<std::vector<std::vector<int64_t>>, uint64_t> last_use_;
  uint64_t use_clock_ = 0;
  std::mutex mutex_;
};

}  // namespace

void RegisterSession(py::module_& m) {
  py::class_<InferenceSession>(m, "InferenceSession",
                               "An ONNX model bound to the bank's policies for this machine, run on numpy arrays.\n\n"
                               "InferenceSession(path, bank=None, soc=None, threads=None): bank is a bank root (default: the\n"
                               "command line's, TUNE_BANK_PATH, ...); soc must be this machine's soc_version when given;\n"
                               "threads sets every library's threads for the process.")
      .def(py::init<const std::string&, const std::optional<std::string>&, const std::optional<std::string>&, std::optional<int>>(),
           py::arg("path"), py::arg("bank") = py::none(), py::arg("soc") = py::none(), py::arg("threads") = py::none())
      .def("get_inputs", &InferenceSession::GetInputs, "the runtime inputs: [{'name', 'shape' (ints, names of dynamic dims), 'dtype'}]")
      .def("get_outputs", &InferenceSession::GetOutputs, "the outputs: [{'name', 'shape', 'dtype'}]")
      .def("run", &InferenceSession::Run, py::arg("output_names"), py::arg("input_feed"),
           "run(output_names or None, {name: ndarray}) -> [ndarray]: a new set of input shapes binds the model again (kept per shape)")
      .def("run_with_step_times", &InferenceSession::RunWithStepTimes, py::arg("output_names"), py::arg("input_feed"),
           "run, and each step's time in this run: (outputs, [{'name', 'op_type', 'time_us', 'template', 'policy', 'source', 'layout'}])")
      .def("check", &InferenceSession::Check, py::arg("data_dir"),
           "runs the inputs of ONNX test data (input_<i>.pb) and judges the outputs against output_<i>.pb as `tilebank run --data` "
           "does (dtype and shape equal, integers exact, floats within rtol 1e-3 and atol 1e-7, or 1e-5 of the output's largest value): "
           "{'ok', 'worst', 'max_abs_error', 'max_rel_error', 'quantized_tolerance', 'bf16_tolerance', 'scale_tolerance'}")
      .def("profile", &InferenceSession::Profile, py::arg("input_feed") = py::none(), py::arg("warmup") = 3, py::arg("repeat") = 10,
           "each step's median time, share, template, policy and its source (bank, nearest, builtin)")
      .def("benchmark", &InferenceSession::Benchmark, py::arg("input_feed") = py::none(), py::arg("warmup") = 3, py::arg("repeat") = 30,
           "the model's median latency and spread over `repeat` runs after `warmup`; random inputs when none are given")
      .def_property_readonly("bound_shapes", &InferenceSession::BoundShapes, "how many input shape sets the session has bound")
      .def("__call__", [](InferenceSession& s, const py::dict& feeds) { return s.Run(std::nullopt, feeds); }, py::arg("input_feed"));
}

}  // namespace tilebank::python
