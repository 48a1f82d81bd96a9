"""ONNX Runtime's exception types, raised by tilebank.onnxruntime.

Each is also the tilebank error of the same meaning (tilebank.Error is a RuntimeError), so a script
may catch either. Messages read as ONNX Runtime's do: "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ..."
followed by tilebank's own message.
"""
import contextlib

import tilebank as _tb

# ONNX Runtime's status codes and names (OrtErrorCode).
_CODES = {
    "Fail": (1, "FAIL"),
    "InvalidArgument": (2, "INVALID_ARGUMENT"),
    "NoSuchFile": (3, "NO_SUCHFILE"),
    "NoModel": (4, "NO_MODEL"),
    "EngineError": (5, "ENGINE_ERROR"),
    "RuntimeException": (6, "RUNTIME_EXCEPTION"),
    "InvalidProtobuf": (7, "INVALID_PROTOBUF"),
    "ModelLoaded": (8, "MODEL_LOADED"),
    "NotImplemented": (9, "NOT_IMPLEMENTED"),
    "InvalidGraph": (10, "INVALID_GRAPH"),
    "EPFail": (11, "EP_FAIL"),
}


class _OrtError:
    """The message with ONNX Runtime's prefix: [ONNXRuntimeError] : <code> : <NAME> : <message>."""

    def __init__(self, message=""):
        code, name = _CODES[type(self).__name__]
        message = str(message)
        # A copy or an unpickled error is made from its message, which has the prefix already.
        super().__init__(message if message.startswith("[ONNXRuntimeError]") else f"[ONNXRuntimeError] : {code} : {name} : {message}")


class Fail(_OrtError, _tb.Error):
    pass


class InvalidArgument(_OrtError, _tb.InvalidInputError):
    pass


class NoSuchFile(_OrtError, _tb.NotFoundError):
    pass


class NoModel(_OrtError, _tb.Error):
    pass


class EngineError(_OrtError, _tb.Error):
    pass


class RuntimeException(_OrtError, _tb.Error):
    pass


class InvalidProtobuf(_OrtError, _tb.InvalidInputError):
    pass


class ModelLoaded(_OrtError, _tb.Error):
    pass


class NotImplemented(_OrtError, _tb.RefusedError):  # noqa: A001 (ONNX Runtime's name)
    pass


class InvalidGraph(_OrtError, _tb.InvalidInputError):
    pass


class EPFail(_OrtError, _tb.Error):
    pass


@contextlib.contextmanager
def as_ort_errors(loading=False):
    """Raises tilebank's errors as ONNX Runtime's: a malformed file InvalidProtobuf (when `loading`),
    another invalid input InvalidArgument, a missing file NoSuchFile, a refusal (another soc_version,
    a newer bank format) Fail, anything else RuntimeException."""
    try:
        yield
    except (Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException, InvalidProtobuf, ModelLoaded,
            NotImplemented, InvalidGraph, EPFail):
        raise
    except _tb.InvalidInputError as error:
        message = str(error)
        if loading and "is not an ONNX model" in message:
            raise InvalidProtobuf(message) from error
        raise InvalidArgument(message) from error
    except _tb.NotFoundError as error:
        raise NoSuchFile(str(error)) from error
    except _tb.RefusedError as error:
        raise Fail(str(error)) from error
    except _tb.Error as error:
        raise RuntimeException(str(error)) from error
