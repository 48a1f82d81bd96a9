"""ONNX Runtime's Python API on tilebank: `import tilebank.onnxruntime as ort` in place of
`import onnxruntime as ort`, and a script runs on tilebank's kernels with the knowledge bank's
tuned policies.

    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]

The bank: the TilebankExecutionProvider's options {"bank": root, "soc_version": ...}, or the session
config entries "tilebank.bank" / "tilebank.soc_version"; without them, the command line's default
bank (TUNE_BANK_PATH, ...). Tuning stays tilebank.tune. What each SessionOptions setting does here:
tilebank.onnxruntime.options. install_as_onnxruntime() makes `import onnxruntime` itself load this
module (for scripts and test suites that cannot be edited).
"""
import sys

import tilebank as _tb
from tilebank.onnxruntime.errors import (  # noqa: F401
    EngineError, EPFail, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf, ModelLoaded, NoModel, NoSuchFile,
    NotImplemented, RuntimeException)
from tilebank.onnxruntime.io_binding import IOBinding  # noqa: F401
from tilebank.onnxruntime.options import (  # noqa: F401
    ExecutionMode, ExecutionOrder, GraphOptimizationLevel, OrtAllocatorType, OrtArenaCfg, OrtMemoryInfo, OrtMemType, RunOptions,
    SessionOptions)
from tilebank.onnxruntime.providers import get_all_providers, get_available_providers  # noqa: F401
from tilebank.onnxruntime.session import InferenceSession, ModelMetadata, NodeArg  # noqa: F401
from tilebank.onnxruntime.values import OrtDevice, OrtSparseFormat, OrtValue, OrtValueVector, SparseTensor  # noqa: F401

# The ONNX Runtime API level this module follows (what version checks in scripts compare with: the
# onnxruntime_test_python.py of 1.17 passes against it); tilebank's own version is tilebank_version.
__version__ = "1.17.0"
tilebank_version = _tb.__version__
_default_log_severity = 2

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "NodeArg", "ModelMetadata", "OrtValue", "OrtValueVector", "IOBinding",
    "SparseTensor", "OrtDevice", "OrtSparseFormat", "OrtMemoryInfo", "OrtArenaCfg", "OrtAllocatorType", "OrtMemType",
    "GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "get_all_providers", "get_available_providers", "get_device",
    "get_version_string", "get_build_info", "set_default_logger_severity", "set_default_logger_verbosity", "set_seed",
    "enable_telemetry_events", "disable_telemetry_events", "create_and_register_allocator", "create_and_register_allocator_v2",
]


def get_version_string():
    return __version__


def get_build_info():
    return (f"Build Info: tilebank {tilebank_version}, ONNX Runtime {__version__}'s Python API on tilebank's kernels "
            f"(soc_version {_tb.soc_version()})")


def get_device():
    return "CPU"


def set_default_logger_severity(severity):
    global _default_log_severity
    if not 0 <= int(severity) <= 4:
        raise RuntimeError(f"Invalid logging severity {severity}: 0 (verbose) to 4 (fatal)")
    _default_log_severity = int(severity)


def set_default_logger_verbosity(verbosity):
    pass  # tilebank writes no verbose log


def enable_telemetry_events():
    pass  # tilebank sends nothing anywhere


def disable_telemetry_events():
    pass


def create_and_register_allocator(mem_info, arena_cfg):
    raise NotImplemented("create_and_register_allocator: tilebank plans each session's activation memory ahead of time; "
                         "it shares no allocator between sessions")


def create_and_register_allocator_v2(provider_type, mem_info, provider_options, arena_cfg):
    create_and_register_allocator(mem_info, arena_cfg)


def set_seed(seed):
    """Warns: tilebank's random ops draw from their seed attribute (a fixed default without one), so
    every run repeats already; there is no global seed to set."""
    import warnings
    warnings.warn(f"set_seed({seed}) changes nothing on tilebank: its random ops draw from their seed attribute "
                  "(a fixed default without one), so every run repeats already", RuntimeWarning, stacklevel=2)


def install_as_onnxruntime():
    """Makes `import onnxruntime` (and its capi submodules) load this module, for code that cannot
    change its import."""
    from tilebank.onnxruntime import backend, capi
    from tilebank.onnxruntime.capi import _pybind_state, onnxruntime_inference_collection, onnxruntime_pybind11_state
    this = sys.modules[__name__]
    sys.modules["onnxruntime"] = this
    sys.modules["onnxruntime.backend"] = backend
    sys.modules["onnxruntime.capi"] = capi
    sys.modules["onnxruntime.capi._pybind_state"] = _pybind_state
    sys.modules["onnxruntime.capi.onnxruntime_pybind11_state"] = onnxruntime_pybind11_state
    sys.modules["onnxruntime.capi.onnxruntime_inference_collection"] = onnxruntime_inference_collection
    return this
