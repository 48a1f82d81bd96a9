#include "python/native/tune.h"

#include <pybind11/stl.h>

#include <atomic>
#include <map>

#include "engine/catalog/builtin_choice.h"
#include "engine/jobs/job.h"
#include "engine/jobs/progress_line.h"
#include "engine/jobs/task_loop.h"
#include "engine/ir/onnx_import.h"
#include "engine/core/soc_version.h"
#include "python/native/bank_open.h"
#include "python/native/errors.h"
#include "repo/bank_location.h"

namespace tilebank::python {

namespace py = pybind11;
using engine::JobEvent;

namespace {

py::dict EventDict(const JobEvent& e) {
  py::dict d;
  d["event"] = engine::JobEventKindName(e.kind);
  d["job_type"] = e.job_type;
  d["job_name"] = e.job_name;
  d["tuning_name"] = e.tuning_name;
  d["tasks"] = e.tasks;
  d["done"] = e.done;
  d["failed"] = e.failed;
  d["elapsed_s"] = e.elapsed_s;
  d["best_gain_percent"] = e.best_gain_percent;
  if (e.kind == JobEvent::Kind::kTaskStarted || e.kind == JobEvent::Kind::kTrial || e.kind == JobEvent::Kind::kTaskDone) {
    d["task"] = e.task;
    d["name"] = e.task_name;
    d["op"] = e.task_op;
  }
  if (e.kind == JobEvent::Kind::kTrial) {
    d["trial"] = e.trial.trial;
    d["budget"] = e.trial.budget;
    d["template"] = e.trial.template_id;
    d["mode"] = e.trial.mode;
    d["policy"] = e.trial.policy;
    d["time_us"] = e.trial.time_us;
    d["spread_us"] = e.trial.spread_us;
    d["verdict"] = e.trial.verdict;
    d["best_us"] = e.trial.best_us;
    d["baseline_us"] = e.trial.baseline_us;
  }
  if (e.kind == JobEvent::Kind::kTaskDone) {
    d["status"] = e.status;
    d["failure"] = e.failure;
    d["before_us"] = e.before_us;
    d["after_us"] = e.after_us;
  }
  if (e.kind == JobEvent::Kind::kJobDone) {
    d["result_path"] = e.result_path;
    d["stopped"] = e.stopped;
  }
  return d;
}

// The callbacks as the job's listeners: each event calls them with the GIL held.
struct PythonCallbacks {
  py::list callbacks;
  std::atomic<bool> stop{false};
  py::object error;  // the first exception a callback raised

  engine::JobListeners Listeners(bool progress) {
    engine::JobListeners l;
    if (progress)
      if (auto line = engine::ProgressListener(engine::ProgressStyleFor(false))) l.on_event.push_back(std::move(line));
    if (!callbacks.empty())
      l.on_event.push_back([this](const JobEvent& e) {
        py::gil_scoped_acquire gil;
        if (error) return;  // a callback raised: the job is stopping
        for (auto cb : callbacks) {
          try {
            py::object answer = cb(EventDict(e));
            if (answer.is(py::bool_(true))) stop = true;
          } catch (py::error_already_set& err) {
            error = py::reinterpret_borrow<py::object>(err.value());
            err.restore();
            PyErr_Clear();
            stop = true;
          }
        }
      });
    l.stop = [this] { return stop.load(); };
    return l;
  }
};

py::dict Tune(const std::optional<std::string>& path, int job_type, const std::optional<std::string>& bank, const std::optional<std::string>& soc,
              int trials, double time_budget, const py::list& callbacks, bool progress, const std::optional<std::string>& output_dir,
              const std::optional<std::string>& reload, const std::optional<std::string>& input_shapes, bool repeat_tune, uint64_t seed, int patience,
              const std::string& precision_mode) {
  const engine::JobType* type = engine::FindJobType(job_type);
  if (!type) Raise(Status::InvalidInput("job_type must be " + engine::JobTypeChoices() + ", not " + std::to_string(job_type)));
  if (trials < 1) Raise(Status::InvalidInput("trials must be at least 1"));
  if (patience < 0) Raise(Status::InvalidInput("patience must be 0 (never stop early) or more"));
  if (time_budget < 0) Raise(Status::InvalidInput("time_budget must not be negative"));
  const engine::PrecisionMode precision = ValueOrRaise(engine::ParsePrecisionMode(precision_mode));
  if (precision != engine::PrecisionMode::kForceFp32 && job_type != 2)
    Raise(Status::InvalidInput("precision_mode is for job type 2 (OPAT): its candidates are the ones that may compute in bf16"));
  if (!path && !reload) Raise(Status::InvalidInput("give a model, an operator list, a subgraph file or a gradient profile (or reload=)"));
  if (path && reload) Raise(Status::InvalidInput("reload goes on with a job's own inputs: give no path"));
  if (!type->resumable && reload)
    Raise(Status::InvalidInput("job type " + std::to_string(job_type) + " (" + type->name + ") plans in one step: there is no job to reload"));
  const std::string soc_version = SocFor(soc.value_or(""));
  if (type->measures_here && soc_version != HostSocVersion())
    Raise(Status::Refused("soc " + soc_version + ": tuning measures this machine, whose soc_version is " + HostSocVersion()));
  ThrowIfError(engine::DefaultPoliciesFromEnvironment().status());
  const auto shapes = ValueOrRaise(engine::model::ParseInputShapes(input_shapes.value_or("")));
  const engine::JobPlace place{ResolveBankRoot(bank.value_or("")), soc_version, HostFingerprint(), output_dir.value_or("."), repeat_tune};

  PythonCallbacks python;
  python.callbacks = callbacks;
  py::dict result;
  result["job_type"] = job_type;
  Status status;
  {
    py::gil_scoped_release release;
    engine::JobRequest request;
    request.input = path.value_or("");
    request.input_shapes = shapes;
    request.place = place;
    request.reload = reload;
    request.time_budget_s = time_budget;
    request.tune.trials = trials;
    request.tune.seed = seed;
    request.tune.patience = patience;
    request.tune.precision_mode = precision;
    {
      py::gil_scoped_acquire gil;
      request.listeners = python.Listeners(progress);
    }
    auto outcome = engine::FindJob(job_type)->Run(request);
    status = outcome.status();
    if (outcome.ok()) {
      py::gil_scoped_acquire gil;
      result["result_path"] = outcome->result_path;
      result["tuning_name"] = outcome->tuning_name;
      result["stopped"] = outcome->stopped;
      std::string note;
      for (const std::string& line : outcome->lines) note += (note.empty() ? "" : "\n") + line;
      result["note"] = note;
    }
  }
  if (python.error) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(python.error.ptr())), python.error.ptr());
    throw py::error_already_set();
  }
  ThrowIfError(status);
  const std::string result_path = py::str(result["result_path"]);
  result["trials_path"] = type->measures_here ? engine::TrialsPathOf(result_path) : std::string();  // its trials, measured here
  return result;
}

}  // namespace

void RegisterTune(py::module_& m) {
  m.def("_tune", &Tune, py::arg("path"), py::arg("job_type"), py::arg("bank"), py::arg("soc"), py::arg("trials"), py::arg("time_budget"),
        py::arg("callbacks"), py::arg("progress"), py::arg("output_dir"), py::arg("reload"), py::arg("input_shapes"), py::arg("repeat_tune"),
        py::arg("seed"), py::arg("patience"), py::arg("precision_mode"), "the job behind tilebank.tune: returns {'job_type', 'result_path', 'trials_path', 'tuning_name', 'stopped', 'note'}");
}

}  // namespace tilebank::python
