"""SessionOptions, RunOptions and the enums and memory settings they take, as ONNX Runtime's.

What each setting does on tilebank:
- intra_op_num_threads: the threads of the kernels (oneDNN, OpenMP, tilebank's loops); 0 (the
  default): every core this process may run on. tilebank's threads are set per process: the last
  session created sets them.
- inter_op_num_threads, execution_mode (ORT_PARALLEL), execution_order: tilebank runs a model's
  steps one after another; these are kept and reported, and change nothing.
- graph_optimization_level: tilebank always applies its own graph passes (fusions, layouts,
  folding), which keep every result; any level is kept and reported.
- enable_profiling, profile_file_prefix: ONNX Runtime's profile (a Chrome trace) of every run, with
  each step's measured time; end_profiling() writes it.
- optimized_model_filepath: refused when the session is created (tilebank's optimized graph holds
  compiled kernels, not ONNX nodes), with ONNX Runtime's message for that case.
- add_initializer / add_external_initializers: the values replace the model's initializers.
- add_free_dimension_override_by_name / _by_denotation: the dims are fixed to those values.
- Session config entries "tilebank.bank" and "tilebank.soc_version" name the knowledge bank the
  session runs with (as the TilebankExecutionProvider's options "bank" and "soc_version" do).
- register_custom_ops_library: refused (NotImplemented): tilebank runs ONNX's ops and the
  com.microsoft quantized ones, not shared libraries of custom kernels.
- enable_cpu_mem_arena, enable_mem_pattern, enable_mem_reuse, use_deterministic_compute,
  log_severity_level, log_verbosity_level, logid: kept; tilebank plans each bound shape's
  activation memory ahead of time and its runs repeat bit for bit.

A session binds the model once per set of input shapes and keeps the last 8 it used; runs on one
session from several threads take turns (each bound model has one activation arena).
"""
import enum

from tilebank.onnxruntime.errors import InvalidArgument, NotImplemented  # noqa: A004


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemType(enum.IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtMemoryInfo:
    """Where a value lives: tilebank has host memory only ("Cpu")."""

    def __init__(self, name, allocator_type, device_id, mem_type):
        self.name, self.allocator_type, self.device_id, self.mem_type = name, allocator_type, device_id, mem_type


class OrtArenaCfg:
    """An arena allocator's settings: OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes,
    max_dead_bytes_per_chunk) or OrtArenaCfg({name: value}). Accepted and kept: tilebank plans each
    bound shape's activation memory ahead of time instead of growing an arena."""

    _KEYS = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
             "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")

    def __init__(self, *args):
        values = dict.fromkeys(self._KEYS, -1)
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in self._KEYS:
                    raise InvalidArgument(f"unknown OrtArenaCfg key '{key}' ({', '.join(self._KEYS)})")
                values[key] = int(value)
        elif len(args) == 4:
            values.update(zip(self._KEYS, (int(a) for a in args)))
        elif args:
            raise InvalidArgument("OrtArenaCfg takes 4 numbers or a dict")
        for key, value in values.items():
            setattr(self, key, value)


class _ConfigEntries:
    """add_*_config_entry / get_*_config_entry of string keys, with ONNX Runtime's message for a
    missing key."""

    def __init__(self, owner):
        self._owner, self._entries = owner, {}

    def add(self, key, value):
        self._entries[str(key)] = str(value)

    def get(self, key):
        if key not in self._entries:
            raise RuntimeError(f"{self._owner} does not have configuration with key: {key}")
        return self._entries[key]

    def items(self):
        return dict(self._entries)


class SessionOptions:
    """How an InferenceSession is created (the module's docstring says what each setting does)."""

    __slots__ = ("enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse", "enable_profiling", "execution_mode",
                 "execution_order", "graph_optimization_level", "inter_op_num_threads", "intra_op_num_threads",
                 "log_severity_level", "log_verbosity_level", "logid", "optimized_model_filepath", "profile_file_prefix",
                 "use_deterministic_compute", "_config", "_initializers", "_dims_by_name", "_dims_by_denotation")

    def __init__(self):
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.enable_profiling = False
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.inter_op_num_threads = 0
        self.intra_op_num_threads = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.optimized_model_filepath = ""
        self.profile_file_prefix = "onnxruntime_profile_"
        self.use_deterministic_compute = False
        self._config = _ConfigEntries("SessionOptions")
        self._initializers = {}
        self._dims_by_name = {}
        self._dims_by_denotation = {}

    def add_session_config_entry(self, key, value):
        self._config.add(key, value)

    def get_session_config_entry(self, key):
        return self._config.get(key)

    def add_initializer(self, name, ort_value):
        """The model's initializer `name` takes this OrtValue's data (same dtype)."""
        if not hasattr(ort_value, "_array"):
            raise InvalidArgument(f"add_initializer('{name}'): give an OrtValue (OrtValue.ortvalue_from_numpy)")
        self._initializers[str(name)] = ort_value

    def add_external_initializers(self, names, ort_values):
        if len(names) != len(ort_values):
            raise InvalidArgument(f"add_external_initializers: {len(names)} names for {len(ort_values)} values")
        for name, value in zip(names, ort_values):
            self.add_initializer(name, value)

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self._dims_by_name[str(dim_name)] = int(dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        self._dims_by_denotation[str(dim_denotation)] = int(dim_value)

    def register_custom_ops_library(self, library_path):
        raise NotImplemented(f"register_custom_ops_library('{library_path}'): tilebank runs ONNX's ops (and the com.microsoft "
                             "quantized ones ONNX Runtime's quantizer writes), not shared libraries of custom kernels")

    def disable_per_session_threads(self):
        pass  # tilebank's threads are the process's already

    def _config_entries(self):
        return self._config.items()

    def __copy__(self):
        """A session's own copy (ONNX Runtime's sessions copy the options they are given)."""
        other = SessionOptions()
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(other, name, dict(value) if isinstance(value, dict) else value)
        other._config = _ConfigEntries("SessionOptions")
        for key, value in self._config.items().items():
            other._config.add(key, value)
        return other


class RunOptions:
    """How one run goes: terminate=True makes it fail at once, as in ONNX Runtime; the log settings
    and config entries are kept."""

    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "terminate", "only_execute_path_to_fetches",
                 "training_mode", "_config")

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
        self.training_mode = False
        self._config = _ConfigEntries("RunOptions")

    def add_run_config_entry(self, key, value):
        self._config.add(key, value)

    def get_run_config_entry(self, key):
        return self._config.get(key)
