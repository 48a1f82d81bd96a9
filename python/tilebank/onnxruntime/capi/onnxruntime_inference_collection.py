"""ONNX Runtime's onnxruntime.capi.onnxruntime_inference_collection names."""
from tilebank.onnxruntime import IOBinding, InferenceSession, OrtValue, SparseTensor  # noqa: F401
from tilebank.onnxruntime.providers import check_and_normalize_provider_args  # noqa: F401
from tilebank.onnxruntime.session import ModelMetadata, NodeArg  # noqa: F401
