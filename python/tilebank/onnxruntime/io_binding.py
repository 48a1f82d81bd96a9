"""IOBinding as ONNX Runtime's Python API has it: inputs and outputs bound ahead of a run, in host
memory (device "cpu"). An output bound to a buffer (an OrtValue, or a pointer with its element type
and shape) is written in place; one bound by name alone is allocated by the run and read back with
get_outputs() or copy_outputs_to_cpu()."""
import numpy as np

from tilebank.onnxruntime.errors import InvalidArgument
from tilebank.onnxruntime.values import OrtValue, OrtValueVector, _cpu_only, array_at


class IOBinding:
    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = {}  # name -> OrtValue to write into, or None (allocated by the run)
        self._results = None

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        _cpu_only(device_type, f"input '{name}'")
        self._inputs[name] = array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        _cpu_only(device_type, f"output '{name}'")
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise InvalidArgument(f"output '{name}' bound to a buffer needs its element_type and shape")
        self._outputs[name] = OrtValue(array_at(buffer_ptr, element_type, shape))

    def bind_ortvalue_output(self, name, ortvalue):
        self._outputs[name] = ortvalue

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results = None

    def synchronize_inputs(self):
        pass  # host memory: nothing is in flight

    def synchronize_outputs(self):
        pass

    def get_outputs(self):
        """The bound outputs of the last run, as OrtValues (those bound to buffers are those buffers)."""
        if self._results is None:
            return OrtValueVector()
        return OrtValueVector(self._results)

    def get_outputs_as_ortvaluevector(self):
        return self.get_outputs()

    def copy_outputs_to_cpu(self):
        return [value.numpy() for value in self.get_outputs()]

    def _run(self, run_options):
        if not self._outputs:
            raise InvalidArgument("run_with_iobinding: bind at least one output (bind_output)")
        names = list(self._outputs)
        arrays = self._session.run(names, self._inputs, run_options)
        results = []
        for name, array in zip(names, arrays):
            target = self._outputs[name]
            if target is None:
                results.append(OrtValue(array))
                continue
            buffer = target._array()
            if not isinstance(buffer, np.ndarray) or buffer.shape != np.shape(array) or buffer.dtype != np.asarray(array).dtype:
                raise InvalidArgument(f"output '{name}' is {np.asarray(array).dtype} {list(np.shape(array))}; the buffer bound to "
                                      f"it is {getattr(buffer, 'dtype', type(buffer).__name__)} {list(getattr(buffer, 'shape', []))}")
            np.copyto(buffer, array)
            results.append(target)
        self._results = results
