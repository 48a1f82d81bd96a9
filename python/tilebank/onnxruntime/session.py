"""InferenceSession, NodeArg and ModelMetadata as ONNX Runtime's Python API has them, running
tilebank's executor (tilebank._native.InferenceSession) bound to the knowledge bank's policies.

A session binds the model once per set of input shapes (kept); a model whose inputs' shapes are all
fixed binds when it is created, so a model tilebank cannot run fails there, as in ONNX Runtime.
"""
import copy
import json
import os
import shutil
import tempfile
import threading
import warnings
import weakref

import numpy as np

import tilebank as _tb
from tilebank.onnxruntime import providers as _providers
from tilebank.onnxruntime.errors import Fail, InvalidArgument, NoSuchFile, as_ort_errors
from tilebank.onnxruntime.io_binding import IOBinding
from tilebank.onnxruntime.options import ExecutionMode, GraphOptimizationLevel, SessionOptions
from tilebank.onnxruntime.profiling import Profile
from tilebank.onnxruntime.values import OrtValue, OrtValueVector, as_string_array, numpy_dtype_of, ort_type_of

# ONNX Runtime's message when a session cannot write its optimized model (its graph holds compiled
# nodes); tilebank's always does.
_NO_OPTIMIZED_MODEL = ("Unable to serialize model as it contains compiled nodes. Please disable any execution providers "
                       "which generate compiled nodes.")


class NodeArg:
    """A graph input or output: name, shape (ints, symbolic names, None for an unnamed dynamic dim;
    [] when the rank is unknown or the value is not a tensor) and type ("tensor(float)", ...)."""

    def __init__(self, name, type, shape):  # noqa: A002 (ONNX Runtime's names)
        self.name, self.type, self.shape = name, type, shape

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata:
    """producer_name, graph_name, domain, description, graph_description, version,
    custom_metadata_map, as the model file gives them."""

    def __init__(self, meta):
        self.producer_name = meta["producer_name"]
        self.graph_name = meta["graph_name"]
        self.domain = meta["domain"]
        self.description = meta["description"]
        self.graph_description = meta["graph_description"]
        self.version = meta["version"]
        self.custom_metadata_map = dict(meta["custom_metadata_map"])


def _load_config_from_model(options, meta):
    """ORT_LOAD_CONFIG_FROM_MODEL=1: the model's "ort_config" metadata ({"session_options": {...}})
    sets the session's options, as in ONNX Runtime."""
    text = meta["custom_metadata_map"].get("ort_config")
    if not text:
        return
    try:
        settings = json.loads(text).get("session_options", {})
    except (ValueError, AttributeError) as error:
        raise InvalidArgument(f"the model's ort_config metadata is not a JSON object: {error}") from error
    kinds = {"intra_op_num_threads": int, "inter_op_num_threads": int, "enable_profiling": bool, "log_severity_level": int,
             "log_verbosity_level": int, "execution_mode": ExecutionMode, "graph_optimization_level": GraphOptimizationLevel,
             "enable_mem_pattern": bool, "enable_cpu_mem_arena": bool, "use_deterministic_compute": bool}
    for key, value in settings.items():
        if key not in kinds:
            raise InvalidArgument(f"the model's ort_config sets '{key}', which tilebank does not take ({', '.join(kinds)})")
        if key == "graph_optimization_level":  # ONNX Runtime's config spells it 0..3 (3: all)
            value = {0: 0, 1: 1, 2: 2, 3: 99}.get(int(value), int(value))
        setattr(options, key, kinds[key](value))


class InferenceSession:
    """InferenceSession(path_or_bytes, sess_options=None, providers=None, provider_options=None).

    The model is a path (str or os.PathLike) or its bytes (then holding its weights inline: external
    data files are found beside a model's path). providers: "TilebankExecutionProvider"
    (options "bank", "soc_version") and "CPUExecutionProvider" (the same kernels); see
    tilebank.onnxruntime.providers. sess_options: tilebank.onnxruntime.options says what each does."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._temp_dir = None
        self._profile = None
        read_config = kwargs.pop("read_config_from_model", os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL", "0"))
        self._read_config_from_model = str(read_config).strip() == "1" or read_config is True
        # Graph optimizers ONNX Runtime may be told to leave out: tilebank's passes keep every result,
        # so there is nothing to leave out; the names are kept.
        self._disabled_optimizers = set(kwargs.pop("disabled_optimizers", None) or ())
        if kwargs:
            raise TypeError(f"InferenceSession got unexpected arguments: {', '.join(kwargs)}")
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._temp_dir = self._new_temp_dir()
            self._model_path = os.path.join(self._temp_dir, "model.onnx")
            with open(self._model_path, "wb") as f:
                f.write(bytes(path_or_bytes))
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            # Absolute: the session reads the file again for each new set of input shapes.
            self._model_path = os.path.abspath(os.fspath(path_or_bytes))
            if not os.path.isfile(self._model_path):
                raise NoSuchFile(f"Load model from {os.fspath(path_or_bytes)} failed:File doesn't exist")
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        self._given_options = sess_options if sess_options is not None else SessionOptions()
        self._create(providers, provider_options)

    def _new_temp_dir(self):
        """A directory removed with the session (or at exit)."""
        path = tempfile.mkdtemp(prefix="tilebank-ort-")
        weakref.finalize(self, shutil.rmtree, path, True)
        return path

    def _create(self, providers, provider_options):
        # The session's own copy, as ONNX Runtime's: what the model's ort_config sets stays here.
        options = self._sess_options = copy.copy(self._given_options)
        with as_ort_errors(loading=True):
            meta = _tb._native.model_metadata(self._model_path)
        if self._read_config_from_model:
            _load_config_from_model(options, meta)
        self._providers, self._provider_options = _providers.session_providers(providers, provider_options)
        if options.optimized_model_filepath:
            raise Fail(_NO_OPTIMIZED_MODEL)
        config = options._config_entries()
        tilebank_options = self._provider_options.get(_providers.TILEBANK, {})
        bank = tilebank_options.get("bank", config.get("tilebank.bank"))
        soc = tilebank_options.get("soc_version", config.get("tilebank.soc_version"))
        threads = int(options.intra_op_num_threads)
        if threads < 0:
            raise InvalidArgument(f"intra_op_num_threads is {threads}: give 0 (the default: every core) or more")
        threads = threads or len(os.sched_getaffinity(0))
        if bank and not os.path.exists(bank):
            warnings.warn(f"bank {bank} does not exist: the session runs with the built-in choices", stacklevel=3)
        self._meta = meta
        self._inputs = [self._node_arg(v, options) for v in meta["inputs"]]
        self._outputs = [self._node_arg(v, options) for v in meta["outputs"]]
        self._overridable = [self._node_arg(v, options) for v in meta["overridable_initializers"]]
        path = self._model_path
        if options._initializers:
            if self._temp_dir is None:
                self._temp_dir = self._new_temp_dir()
            path = os.path.join(self._temp_dir, "model_with_initializers.onnx")
            with as_ort_errors(loading=True):
                _tb._native.write_model_with_initializers(
                    self._model_path, {k: v._array() for k, v in options._initializers.items()}, path)
        if options.enable_profiling:
            self._profile = Profile(options.profile_file_prefix)
        started = self._profile.now_us() if self._profile else 0
        with as_ort_errors(loading=True):
            self._sess = _NativeSession(path, bank, soc, threads)
        if self._profile:
            self._profile.session_event("model_loading_uri", started, self._profile.now_us())

    @staticmethod
    def _node_arg(value, options):
        shape = value["shape"]
        if shape is None or not value["type"].startswith("tensor("):
            return NodeArg(value["name"], value["type"], [])
        fixed = []
        for dim, denotation in zip(shape, value["denotations"]):
            if isinstance(dim, str) and dim in options._dims_by_name:
                dim = options._dims_by_name[dim]
            elif denotation and denotation in options._dims_by_denotation and not isinstance(dim, int):
                dim = options._dims_by_denotation[denotation]
            fixed.append(dim)
        return NodeArg(value["name"], value["type"], fixed)

    # --- what the session is --------------------------------------------------------------------
    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return list(self._overridable)

    def get_modelmeta(self):
        return ModelMetadata(self._meta)

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {name: dict(options) for name, options in self._provider_options.items()}

    def get_session_options(self):
        return self._sess_options

    def set_providers(self, providers=None, provider_options=None):
        """Binds the model again with these providers (ONNX Runtime's reset)."""
        self._create(providers, provider_options)

    def disable_fallback(self):
        pass  # one provider: nothing to fall back to

    def enable_fallback(self):
        pass

    # --- running --------------------------------------------------------------------------------
    def run(self, output_names, input_feed, run_options=None):
        """[arrays] of `output_names` (all when None or empty) from {input name: array, list, OrtValue}."""
        if run_options is not None and run_options.terminate:
            raise Fail("Exiting due to terminate flag being set to true.")
        names = self._output_names(output_names)
        feed = self._feed(input_feed)
        return self._run(names, feed)

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on another thread, then callback(outputs, user_data, error message or "")."""
        def work():
            try:
                outputs, error = self.run(output_names, input_feed, run_options), ""
            except Exception as e:  # noqa: BLE001 (handed to the callback, as ONNX Runtime does)
                outputs, error = [], str(e)
            callback(outputs, user_data, error)
        threading.Thread(target=work, daemon=True).start()

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """[OrtValue] of `output_names` (all when None or empty) from {name: OrtValue}."""
        outputs = self.run(output_names, input_dict_ort_values, run_options)
        return OrtValueVector(OrtValue(o) for o in outputs)

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):
        results = self.run(fetch_names, dict(zip(feed_names, feeds)), run_options)
        fetches.clear()
        fetches.extend(OrtValue(r) for r in results)

    # --- profiling ------------------------------------------------------------------------------
    def end_profiling(self):
        """Writes the profile (ONNX Runtime's Chrome trace JSON) and returns its file name; "" when
        profiling is off."""
        if self._profile is None:
            return ""
        name = self._profile.write()
        self._profile = None
        return name

    def get_profiling_start_time_ns(self):
        return self._profile.start_time_ns if self._profile else 0

    # --- tilebank's own -------------------------------------------------------------------------
    @property
    def _sess_native(self):
        return self._sess.native

    def _output_names(self, output_names):
        if not output_names:
            return None
        known = {o.name for o in self._outputs}
        for name in output_names:
            if name not in known:
                raise InvalidArgument(f"Invalid Output Name:{name}")
        return list(output_names)

    def _feed(self, input_feed):
        """The feed as tilebank's executor takes it, checked as ONNX Runtime checks it."""
        missing = [i.name for i in self._inputs if i.name not in input_feed and not i.type.startswith("optional")]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")
        declared = {i.name: i for i in self._inputs}
        for name in input_feed:
            if name not in declared:
                if name in {o.name for o in self._overridable}:
                    raise InvalidArgument(f"Feeding the initializer '{name}': tilebank binds a model's initializers as "
                                          "constants; give it to SessionOptions.add_initializer instead")
                raise InvalidArgument(f"Invalid Feed Input Name:{name}")
        return {name: self._input_value(declared[name], value) for name, value in input_feed.items()}

    @staticmethod
    def _input_value(arg, value):
        if isinstance(value, OrtValue):
            value = value._array()
        want = numpy_dtype_of(arg.type)
        if not arg.type.startswith("tensor("):
            return value  # a sequence (list) or optional (None or its value): the executor checks them
        if not isinstance(value, np.ndarray):
            value = np.asarray(value, dtype=want) if want is not None and want != np.object_ else np.asarray(value)
        if want == np.object_:
            if value.dtype.kind not in "USOV":
                raise InvalidArgument(f"Unexpected input data type. Actual: ({ort_type_of(value)}) , expected: ({arg.type})")
            value = value if value.dtype.kind == "O" and all(isinstance(v, str) for v in value.flat) else as_string_array(value)
        elif want is not None and value.dtype != want and not (arg.type == "tensor(bfloat16)" and value.dtype == np.float32):
            raise InvalidArgument(f"Unexpected input data type. Actual: ({ort_type_of(value)}) , expected: ({arg.type})")
        if arg.shape:
            if value.ndim != len(arg.shape):
                raise InvalidArgument(f"Invalid rank for input: {arg.name} Got: {value.ndim} Expected: {len(arg.shape)} "
                                      "Please fix either the inputs/outputs or the model.")
            bad = [(i, got, want_dim) for i, (got, want_dim) in enumerate(zip(value.shape, arg.shape))
                   if isinstance(want_dim, int) and got != want_dim]
            if bad:
                listed = "\n".join(f" index: {i} Got: {got} Expected: {w}" for i, got, w in bad)
                raise InvalidArgument(f"Got invalid dimensions for input: {arg.name} for the following indices\n{listed}\n "
                                      "Please fix either the inputs/outputs or the model.")
        return value

    def _run(self, names, feed):
        profile = self._profile  # once: end_profiling on another thread may end it meanwhile
        with as_ort_errors():
            if profile is None:
                return self._sess.native.run(names, feed)
            started = profile.now_us()
            outputs, steps = self._sess.native.run_with_step_times(names, feed)
            profile.run_events(started, profile.now_us(), steps)
            return outputs


class _NativeSession:
    """tilebank's session for a model file, and the low-level run ONNX Runtime's tests reach as
    `sess._sess.run_with_ort_values`."""

    def __init__(self, path, bank, soc, threads):
        self.native = _tb._native.InferenceSession(path, bank=bank, soc=soc, threads=threads)

    def run_with_ort_values(self, feeds, output_names, run_options=None):
        arrays = {name: (v._array() if isinstance(v, OrtValue) else v) for name, v in feeds.items()}
        with as_ort_errors():
            outputs = self.native.run(list(output_names) or None, arrays)
        return OrtValueVector(OrtValue(o) for o in outputs)
