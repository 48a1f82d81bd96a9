"""OrtValue, OrtDevice and SparseTensor as ONNX Runtime's Python API has them, over numpy.

tilebank runs on this machine's CPU: every value lives in host memory ("cpu"); another device is
refused with NotImplemented naming it.
"""
import ctypes

import numpy as np

from tilebank.onnxruntime.errors import InvalidArgument, NotImplemented  # noqa: A004

# ONNX Runtime's element type names (inside "tensor(...)") and their numpy dtypes.
_ELEMENT_DTYPES = {
    "float": np.float32, "double": np.float64, "float16": np.float16, "bfloat16": np.float32,
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
    "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "bool": np.bool_, "string": np.object_,
    "complex64": np.complex64, "complex128": np.complex128,
}
_DTYPE_ELEMENTS = {np.dtype(v): k for k, v in _ELEMENT_DTYPES.items() if k != "bfloat16"}
# ONNX's TensorProto element type numbers (ortvalue_from_numpy_with_onnx_type).
_ONNX_ELEMENT_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
                       9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
                       16: "bfloat16"}
_ONNX_ELEMENT_NUMBERS = {name: number for number, name in _ONNX_ELEMENT_NAMES.items()}


def element_dtype(element_type):
    """A numpy dtype from a numpy type (np.float32) or ONNX's element type number (TensorProto.FLOAT),
    as ONNX Runtime's element_type arguments take either."""
    if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, bool):
        name = _ONNX_ELEMENT_NAMES.get(int(element_type))
        if name is None:
            raise InvalidArgument(f"ONNX element type {element_type} is not a tensor element type")
        return np.dtype(_ELEMENT_DTYPES[name])
    return np.dtype(element_type)


def onnx_element_type(dtype):
    """ONNX's element type number of a numpy dtype (strings: 8)."""
    if np.dtype(dtype).kind in "USOV":
        return 8
    name = _DTYPE_ELEMENTS.get(np.dtype(dtype))
    if name is None:
        raise InvalidArgument(f"numpy dtype {dtype} has no ONNX type")
    return _ONNX_ELEMENT_NUMBERS[name]


def c_contiguous(array):
    """The array itself when it is C-contiguous, else a C-contiguous copy; 0-d stays 0-d
    (np.ascontiguousarray would make it 1-d)."""
    return array if array.flags.c_contiguous else np.array(array, order="C")


def numpy_dtype_of(ort_type):
    """The numpy dtype of "tensor(float)" (or of a sequence's or optional's tensors); None if there is none."""
    inner = ort_type
    while inner.startswith(("seq(", "optional(")):
        inner = inner[inner.index("(") + 1:-1]
    if inner.startswith("tensor(") and inner.endswith(")"):
        element = _ELEMENT_DTYPES.get(inner[len("tensor("):-1])
        return None if element is None else np.dtype(element)
    return None


def ort_type_of(array):
    """ONNX Runtime's "tensor(<element>)" for a numpy array."""
    if array.dtype.kind in "USOV":
        return "tensor(string)"
    element = _DTYPE_ELEMENTS.get(array.dtype)
    if element is None:
        raise InvalidArgument(f"numpy dtype {array.dtype} has no ONNX type")
    return f"tensor({element})"


def as_string_array(array):
    """numpy str, bytes, void or object items as an object array of str (ONNX strings are UTF-8)."""
    def text(item):
        if isinstance(item, (bytes, np.bytes_)):
            return bytes(item).decode("utf-8")
        if isinstance(item, np.void):
            return bytes(item).rstrip(b"\0").decode("utf-8")
        return str(item)
    out = np.empty(array.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        flat[i] = text(item)
    return out


def _cpu_only(device_type, what):
    if str(device_type).lower() != "cpu":
        raise NotImplemented(f"{what} on device '{device_type}': tilebank runs on this machine's CPU; use 'cpu'")


class OrtDevice:
    """A device: only the CPU (OrtDevice.make('cpu', 0))."""

    _TYPES = {"cpu": 0, "cuda": 1, "dml": 4, "cann": 5}

    def __init__(self, device_type=0, memory_type=0, device_id=0):
        self._type, self._memory_type, self._id = device_type, memory_type, device_id

    @staticmethod
    def make(device_type, device_id):
        name = str(device_type).lower()
        if name not in OrtDevice._TYPES:
            raise InvalidArgument(f"unknown device type '{device_type}' (cpu, cuda, dml, cann)")
        return OrtDevice(OrtDevice._TYPES[name], 0, device_id)

    @staticmethod
    def cpu():
        return 0

    @staticmethod
    def cuda():
        return 1

    @staticmethod
    def dml():
        return 4

    @staticmethod
    def default_memory():
        return 0

    def device_id(self):
        return self._id

    def device_type(self):
        return self._type

    def device_name(self):
        return next((name for name, number in OrtDevice._TYPES.items() if number == self._type), "unknown")


class OrtSparseFormat:
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


class _CooView:
    def __init__(self, indices):
        self._indices = indices

    def indices(self):
        return self._indices


class _CsrcView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return self._inner

    def outer(self):
        return self._outer


def _read_only(array, dtype=None):
    view = np.array(array, dtype=dtype, copy=True)
    view.flags.writeable = False
    return view


class SparseTensor:
    """A sparse tensor in host memory (COO or CSR): a value to hold and pass around. tilebank's
    executor runs dense tensors; a model input of sparse type is refused when the model loads."""

    def __init__(self, fmt, shape, values, **indices):
        self._format, self._shape, self._values, self._indices = fmt, [int(d) for d in shape], values, indices

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device):
        _cpu_only(ort_device.device_name(), "a sparse tensor")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_COO, dense_shape, _values_of(values),
                            coo=_read_only(coo_indices, np.int64))

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device):
        _cpu_only(ort_device.device_name(), "a sparse tensor")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_CSRC, dense_shape, _values_of(values),
                            inner=_read_only(inner_indices, np.int64), outer=_read_only(outer_indices, np.int64))

    def format(self):
        return self._format

    def dense_shape(self):
        return list(self._shape)

    def values(self):
        return self._values

    def data_type(self):
        return "sparse_" + ort_type_of(self._values)

    def device_name(self):
        return "cpu"

    def as_coo_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            raise InvalidArgument("this sparse tensor is not in COO format")
        return _CooView(self._indices["coo"])

    def as_csrc_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise InvalidArgument("this sparse tensor is not in CSR format")
        return _CsrcView(self._indices["inner"], self._indices["outer"])

    def to_cuda(self, ort_device):
        raise NotImplemented("a sparse tensor on CUDA: tilebank runs on this machine's CPU")


def _values_of(values):
    array = np.asarray(values)
    return _read_only(as_string_array(array) if array.dtype.kind in "USV" else array)


class OrtValue:
    """A tensor (a numpy array in host memory), a sequence of tensors (a list), or a sparse tensor.

    ortvalue_from_numpy shares the array's memory, as ONNX Runtime does on the CPU: update_inplace and
    a bound output write into it; numpy() returns a copy."""

    def __init__(self, value):
        self._value = value

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        _cpu_only(device_type, "an OrtValue")
        array = numpy_obj if isinstance(numpy_obj, np.ndarray) else np.asarray(numpy_obj)
        if array.dtype.kind in "USV":
            array = as_string_array(array)
        return OrtValue(c_contiguous(array))

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data, onnx_element_type):
        """`data`'s bytes read as ONNX's element type (a uint16 array as FLOAT16 or BFLOAT16 bits):
        the same item size, shared memory; bfloat16 is widened to float32, as tilebank holds it."""
        array = c_contiguous(np.asarray(data))
        if int(onnx_element_type) == 16:  # BFLOAT16: the high half of a float32
            if array.dtype.itemsize != 2:
                raise InvalidArgument(f"bfloat16 bits come as 2-byte items; got {array.dtype}")
            return OrtValue((array.view(np.uint16).astype(np.uint32) << 16).view(np.float32))
        dtype = element_dtype(int(onnx_element_type))
        if dtype == np.object_ or array.dtype.itemsize != dtype.itemsize:
            raise InvalidArgument(f"{array.dtype} items cannot be read as ONNX element type {onnx_element_type} ({dtype})")
        return OrtValue(array.view(dtype))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        """A zeroed tensor; element_type a numpy type or ONNX's element type number."""
        _cpu_only(device_type, "an OrtValue")
        return OrtValue(np.zeros([int(d) for d in shape], dtype=element_dtype(element_type)))

    @staticmethod
    def ort_value_from_sparse_tensor(sparse_tensor):
        return OrtValue(sparse_tensor)

    def _get_c_value(self):
        return self

    def data_ptr(self):
        self._require_tensor("data_ptr")
        return self._value.ctypes.data

    def device_name(self):
        return "cpu"

    def shape(self):
        if isinstance(self._value, SparseTensor):
            return self._value.dense_shape()
        self._require_tensor("shape")
        return list(self._value.shape)

    def data_type(self):
        if isinstance(self._value, SparseTensor):
            return self._value.data_type()
        if isinstance(self._value, list):
            return "seq(" + (ort_type_of(self._value[0]) if self._value else "tensor(float)") + ")"
        return ort_type_of(self._value)

    def element_type(self):
        """ONNX's element type number (TensorProto.FLOAT is 1), as ONNX Runtime returns it."""
        self._require_tensor("element_type")
        return onnx_element_type(self._value.dtype)

    def has_value(self):
        return self._value is not None

    def is_tensor(self):
        return isinstance(self._value, np.ndarray)

    def is_tensor_sequence(self):
        return isinstance(self._value, list)

    def is_sparse_tensor(self):
        return isinstance(self._value, SparseTensor)

    def as_sparse_tensor(self):
        if not isinstance(self._value, SparseTensor):
            raise InvalidArgument("this OrtValue does not hold a sparse tensor")
        return self._value

    def numpy(self):
        if isinstance(self._value, list):
            return [np.array(t, copy=True) for t in self._value]
        self._require_tensor("numpy")
        return np.array(self._value, copy=True)

    def update_inplace(self, np_arr):
        self._require_tensor("update_inplace")
        src = np.asarray(np_arr)
        if src.size != self._value.size or src.dtype != self._value.dtype:
            raise InvalidArgument(f"update_inplace: {src.dtype} {list(src.shape)} does not fit this OrtValue's "
                                  f"{self._value.dtype} {list(self._value.shape)}")
        np.copyto(self._value, src.reshape(self._value.shape))

    def _require_tensor(self, what):
        if not isinstance(self._value, np.ndarray):
            raise InvalidArgument(f"{what}: this OrtValue does not hold a tensor")

    def _array(self):
        """The value a run reads: the array itself (or the list of a sequence), no copy."""
        if isinstance(self._value, SparseTensor):
            raise NotImplemented("a sparse tensor as a model input: tilebank's executor runs dense tensors")
        return self._value


class OrtValueVector(list):
    """A list of OrtValues (what run_with_ort_values returns)."""


def array_at(buffer_ptr, element_type, shape):
    """A numpy array over host memory at `buffer_ptr` (IOBinding.bind_input/bind_output with a pointer)."""
    dtype = element_dtype(element_type)
    count = int(np.prod(shape)) if len(shape) else 1
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape([int(d) for d in shape])
