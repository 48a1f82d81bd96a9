"""ONNX Runtime's onnxruntime.capi.onnxruntime_pybind11_state names: its exception types and the
option and value types scripts import from there (SessionIOBinding is IOBinding)."""
from tilebank.onnxruntime import (  # noqa: F401
    EngineError, EPFail, ExecutionMode, ExecutionOrder, Fail, GraphOptimizationLevel, InvalidArgument, InvalidGraph,
    InvalidProtobuf, ModelLoaded, NodeArg, NoModel, NoSuchFile, NotImplemented, OrtDevice, OrtMemoryInfo, OrtSparseFormat, OrtValue,
    OrtValueVector, RunOptions, RuntimeException, SessionOptions, SparseTensor, get_all_providers, get_available_providers, get_device)
from tilebank.onnxruntime import IOBinding as SessionIOBinding  # noqa: F401
