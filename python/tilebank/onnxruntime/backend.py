"""ONNX Runtime's onnxruntime.backend on tilebank: ONNX's backend interface (onnx.backend.base), as
`import onnxruntime.backend as backend` scripts and ONNX's backend test runner use it.

    rep = backend.prepare("model.onnx")          # a path, the model's bytes or an onnx.ModelProto
    outputs = rep.run([x])                        # a list in the model's input order, a dict, or one array
    outputs = backend.run_model(model, [x])

prepare's keyword arguments set SessionOptions attributes of the same name; run's set RunOptions
attributes (others are left alone, as ONNX Runtime's backend leaves them). One device: "CPU".
"""
from tilebank.onnxruntime.errors import InvalidArgument
from tilebank.onnxruntime.options import RunOptions, SessionOptions
from tilebank.onnxruntime.session import InferenceSession

# The opset of the default domain tilebank's executor implements (engine/ir/onnx_import.h).
_EXECUTOR_OPSET = 17


def _serialized(model):
    if isinstance(model, (str, bytes, bytearray)):
        return model
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return model.SerializeToString()
    raise InvalidArgument(f"a model is a path, its bytes or an onnx.ModelProto, not {type(model).__name__}")


def _with_attributes(options, kwargs):
    """The attributes of `options` named in kwargs set; other keywords are not options and are left
    alone, as ONNX Runtime's backend leaves them."""
    for key, value in kwargs.items():
        if hasattr(options, key):
            setattr(options, key, value)
    return options


class BackendRep:
    """A prepared model: run(inputs, **run_options) -> [outputs]."""

    def __init__(self, session):
        self._session = session

    @property
    def session(self):
        return self._session

    def run(self, inputs, **kwargs):
        options = _with_attributes(RunOptions(), kwargs)
        args = self._session.get_inputs()
        if isinstance(inputs, dict):
            feed = inputs
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(args):
                raise InvalidArgument(f"{len(inputs)} inputs given; the model has {len(args)} ({', '.join(a.name for a in args)})")
            feed = {a.name: value for a, value in zip(args, inputs)}
        else:
            if len(args) != 1:
                raise InvalidArgument(f"one input given; the model has {len(args)} ({', '.join(a.name for a in args)})")
            feed = {args[0].name: inputs}
        return self._session.run(None, feed, options)


def is_compatible(model, device=None, **kwargs):
    return supports_device(device or "CPU")


def is_opset_supported(model):
    """(whether tilebank reads the model's opsets, why not)."""
    for opset in getattr(model, "opset_import", []):
        if opset.domain in ("", "ai.onnx") and opset.version > _EXECUTOR_OPSET:
            return False, f"the model uses opset {opset.version}; tilebank's executor implements opset {_EXECUTOR_OPSET}"
    return True, ""


def supports_device(device):
    return str(device).upper() == "CPU"


def prepare(model, device=None, **kwargs):
    if device is not None and not supports_device(device):
        raise RuntimeError(f"device '{device}': tilebank runs on this machine's CPU")
    if isinstance(model, BackendRep):
        return model
    if isinstance(model, InferenceSession):
        return BackendRep(model)
    options = _with_attributes(SessionOptions(), kwargs)
    return BackendRep(InferenceSession(_serialized(model), sess_options=options, providers=["CPUExecutionProvider"]))


def run_model(model, inputs, device=None, **kwargs):
    return prepare(model, device, **kwargs).run(inputs)


def run_node(node, inputs, device=None, outputs_info=None, **kwargs):
    raise NotImplementedError("run_node: tilebank runs whole models; put the node in a model (onnx.helper.make_model)")


try:  # ONNX's backend base class, when python3-onnx is installed (the interface is the same without it)
    import onnx.backend.base as _base

    class TilebankBackend(_base.Backend):
        is_compatible = staticmethod(is_compatible)
        is_opset_supported = staticmethod(is_opset_supported)
        supports_device = staticmethod(supports_device)
        prepare = staticmethod(prepare)
        run_model = staticmethod(run_model)
        run_node = staticmethod(run_node)
except ImportError:
    pass
