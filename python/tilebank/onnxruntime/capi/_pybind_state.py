"""ONNX Runtime's onnxruntime.capi._pybind_state: the names of onnxruntime_pybind11_state."""
from tilebank.onnxruntime.capi.onnxruntime_pybind11_state import *  # noqa: F401,F403


def get_default_session_options():
    from tilebank.onnxruntime import SessionOptions
    return SessionOptions()
