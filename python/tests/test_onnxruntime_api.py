"""tilebank.onnxruntime: ONNX Runtime's Python API on tilebank, each part against numpy and against
what ONNX Runtime's API says it does."""
import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tilebank
import tilebank.onnxruntime as ort
from models import sequence_model
from ort_models import W, dynamic_matmul, mul_by_w, mul_by_w_external, mul_by_w_ir, scalars_and_types, strings_and_bools, with_ort_config

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)


@pytest.fixture
def mul_model(tmp_path):
    return mul_by_w(tmp_path / "mul.onnx")


def test_session_from_a_path_a_path_object_and_bytes(mul_model):
    for source in (mul_model, pathlib.Path(mul_model), open(mul_model, "rb").read()):
        sess = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
        (y,) = sess.run(None, {"X": X})
        np.testing.assert_array_equal(y, X * W)
        assert sess.run([], {"X": X})[0].shape == (3, 2)  # [] asks for every output too


def test_node_args_name_shape_and_type(tmp_path):
    sess = ort.InferenceSession(dynamic_matmul(tmp_path / "dyn.onnx"))
    (x,) = sess.get_inputs()
    assert (x.name, x.shape, x.type) == ("X", ["batch", 4], "tensor(float)")
    assert [(o.name, o.shape, o.type) for o in sess.get_outputs()] == [("Y", ["batch", 5], "tensor(float)"),
                                                                       ("Z", [None, 4], "tensor(float)")]
    typed = ort.InferenceSession(strings_and_bools(tmp_path / "typed.onnx"))
    assert [(i.name, i.type) for i in typed.get_inputs()] == [("S", "tensor(string)"), ("P", "tensor(bool)"), ("Q", "tensor(bool)")]
    assert "NodeArg(name='S'" in repr(typed.get_inputs()[0])
    sequences = ort.InferenceSession(sequence_model(tmp_path / "seq.onnx"))
    assert [(i.name, i.type, i.shape) for i in sequences.get_inputs()] == [("s", "seq(tensor(float))", []),
                                                                           ("o", "optional(tensor(float))", [])]
    assert sequences.get_outputs()[3].type == "seq(tensor(float))"
    scalars = ort.InferenceSession(scalars_and_types(tmp_path / "scalars.onnx"))
    assert [(i.type, i.shape) for i in scalars.get_inputs()] == [("tensor(float)", []), ("tensor(int64)", []), ("tensor(float16)", [2])]


def test_dynamic_inputs_rebind_per_shape_and_outputs_by_name(tmp_path):
    sess = ort.InferenceSession(dynamic_matmul(tmp_path / "dyn.onnx"))
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        y, z = sess.run(None, {"X": x})
        assert y.shape == (batch, 5)
        np.testing.assert_allclose(z, x + 1)
        (z_only,) = sess.run(["Z"], {"X": x})
        np.testing.assert_array_equal(z_only, z)


def test_free_dimension_overrides(tmp_path):
    path = dynamic_matmul(tmp_path / "dyn.onnx")
    by_name = ort.SessionOptions()
    by_name.add_free_dimension_override_by_name("batch", 3)
    assert ort.InferenceSession(path, by_name).get_inputs()[0].shape == [3, 4]
    by_denotation = ort.SessionOptions()
    by_denotation.add_free_dimension_override_by_denotation("DATA_BATCH", 6)
    sess = ort.InferenceSession(path, by_denotation)
    assert sess.get_inputs()[0].shape == [6, 4]
    with pytest.raises(ort.InvalidArgument, match="Got invalid dimensions for input: X"):
        sess.run(None, {"X": np.zeros((2, 4), np.float32)})


def test_inputs_checked_as_onnx_runtime_checks_them(mul_model):
    sess = ort.InferenceSession(mul_model)
    with pytest.raises(ValueError, match=r"Required inputs \(\['X'\]\) are missing from input feed \(\[\]\)"):
        sess.run(None, {})
    with pytest.raises(ort.InvalidArgument, match="Invalid Feed Input Name:Q"):
        sess.run(None, {"X": X, "Q": X})
    with pytest.raises(ort.InvalidArgument, match=r"Unexpected input data type. Actual: \(tensor\(double\)\) , expected: \(tensor\(float\)\)"):
        sess.run(None, {"X": X.astype(np.float64)})
    with pytest.raises(ort.InvalidArgument, match="Invalid rank for input: X Got: 1 Expected: 2"):
        sess.run(None, {"X": X.reshape(-1)})
    with pytest.raises(ort.InvalidArgument, match="Invalid Output Name:nope"):
        sess.run(["nope"], {"X": X})
    # ONNX Runtime's errors are tilebank's errors too.
    with pytest.raises(tilebank.InvalidInputError):
        sess.run(None, {"X": X.astype(np.float64)})
    # A list is read in the input's type; a strided array as its values.
    np.testing.assert_array_equal(sess.run(None, {"X": X.tolist()})[0], X * W)
    np.testing.assert_array_equal(sess.run(None, {"X": np.asfortranarray(X)})[0], X * W)


def test_strings_bytes_and_bools(tmp_path):
    sess = ort.InferenceSession(strings_and_bools(tmp_path / "typed.onnx"))
    p, q = np.array([True, False]), np.array([True, True])
    for s in (np.array([["a", "bé"], ["你好", "d"]]), np.array([[b"a", b"b"], [b"c", b"d"]]), np.array([["a", "b"], ["c", "d"]], object)):
        s2, a = sess.run(None, {"S": s, "P": p, "Q": q})
        assert s2.dtype == object and s2.tolist() == [[v.decode() if isinstance(v, bytes) else str(v) for v in row] for row in s]
        np.testing.assert_array_equal(a, p & q)


def test_missing_and_malformed_models_raise_onnx_runtime_types(tmp_path):
    with pytest.raises(ort.NoSuchFile, match="NO_SUCHFILE"):
        ort.InferenceSession(str(tmp_path / "absent.onnx"))
    with pytest.raises(FileNotFoundError):
        ort.InferenceSession(str(tmp_path / "absent.onnx"))
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(ort.InvalidProtobuf, match=r"\[ONNXRuntimeError\] : 7 : INVALID_PROTOBUF : .*bad.onnx"):
        ort.InferenceSession(str(tmp_path / "bad.onnx"))
    with pytest.raises(TypeError):
        ort.InferenceSession(42)


def test_providers(mul_model):
    assert ort.get_available_providers() == ["TilebankExecutionProvider", "CPUExecutionProvider"]
    assert ort.get_all_providers()[0] == "TilebankExecutionProvider" and ort.get_all_providers()[-1] == "CPUExecutionProvider"
    assert ort.InferenceSession(mul_model).get_providers() == ["TilebankExecutionProvider", "CPUExecutionProvider"]
    assert ort.InferenceSession(mul_model, providers=["CPUExecutionProvider"]).get_providers() == ["CPUExecutionProvider"]
    with pytest.warns(UserWarning, match="CUDAExecutionProvider not available on tilebank"):
        sess = ort.InferenceSession(mul_model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(RuntimeError, match="Unknown Provider Type: NoSuchProvider"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sess.set_providers(["NoSuchProvider"])
    with pytest.raises(ValueError, match="has no option colour"):
        ort.InferenceSession(mul_model, providers=[("TilebankExecutionProvider", {"colour": "red"})])
    with pytest.raises(ort.Fail, match="this machine's soc_version"):
        ort.InferenceSession(mul_model, providers=[("TilebankExecutionProvider", {"soc_version": "another-soc"})])
    sess = ort.InferenceSession(mul_model, providers=["TilebankExecutionProvider"], provider_options=[{"bank": os.path.dirname(mul_model)}])
    assert sess.get_provider_options() == {"TilebankExecutionProvider": {"bank": os.path.dirname(mul_model)}}


def test_check_and_normalize_provider_args():
    from tilebank.onnxruntime.capi.onnxruntime_inference_collection import check_and_normalize_provider_args as check
    assert check(None, None, ["a"]) == ([], [])
    assert check([("a", {1: 2}), "b"], None, ["a", "b"]) == (["a", "b"], [{"1": "2"}, {}])
    assert check(["a", "b"], [{1: 2}, {}], ["a", "b"]) == (["a", "b"], [{"1": "2"}, {}])
    with pytest.warns(UserWarning, match="Duplicate provider 'a'"):
        assert check(["a", "a"], None, ["a"]) == (["a"], [{}])
    for providers, options in ((3, None), ([3], None), (["a"], 3), (["a"], ["x"]), (["a", "b"], [{}]), ([("a", {})], [{}])):
        with pytest.raises(ValueError):
            check(providers, options, ["a", "b"])


def test_session_options(tmp_path, mul_model):
    so = ort.SessionOptions()
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    so.add_session_config_entry("session.use_env_allocators", "0")
    assert so.get_session_config_entry("session.use_env_allocators") == "0"
    with pytest.raises(RuntimeError, match="SessionOptions does not have configuration with key: absent"):
        so.get_session_config_entry("absent")
    with pytest.raises(AttributeError):
        so.intra_op_threads = 2  # a misspelt option is an error, as on ONNX Runtime's object
    sess = ort.InferenceSession(mul_model, sess_options=so)
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], X * W)
    assert sess.get_session_options() is not so  # the session's own copy, as ONNX Runtime's
    assert sess.get_session_options().get_session_config_entry("session.use_env_allocators") == "0"
    assert sess.get_session_options().intra_op_num_threads == 1
    with pytest.raises(ort.NotImplemented, match="custom kernels"):
        so.register_custom_ops_library("libcustom.so")
    written = ort.SessionOptions()
    written.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    with pytest.raises(ort.Fail, match="Unable to serialize model as it contains compiled nodes"):
        ort.InferenceSession(mul_model, written)
    assert not (tmp_path / "optimized.onnx").exists()
    bad = ort.SessionOptions()
    bad.intra_op_num_threads = -1
    with pytest.raises(ort.InvalidArgument, match="intra_op_num_threads"):
        ort.InferenceSession(mul_model, bad)


def test_initializers_given_in_the_options_replace_the_models(mul_model):
    so = ort.SessionOptions()
    other = np.full((3, 2), 2.0, np.float32)
    so.add_initializer("W", ort.OrtValue.ortvalue_from_numpy(other))
    np.testing.assert_array_equal(ort.InferenceSession(mul_model, so).run(None, {"X": X})[0], X * other)
    wrong_type = ort.SessionOptions()
    wrong_type.add_external_initializers(["W"], [ort.OrtValue.ortvalue_from_numpy(other.astype(np.int64))])
    with pytest.raises(ort.InvalidArgument, match=r"initializer 'W' .* is float32 3x2; the value given is int64 3x2"):
        ort.InferenceSession(mul_model, wrong_type)
    unknown = ort.SessionOptions()
    unknown.add_initializer("V", ort.OrtValue.ortvalue_from_numpy(other))
    with pytest.raises(ort.InvalidArgument, match="'V' is not an initializer"):
        ort.InferenceSession(mul_model, unknown)


def test_config_from_the_model(tmp_path, monkeypatch):
    path = with_ort_config(tmp_path / "configured.onnx", json.dumps(
        {"session_options": {"intra_op_num_threads": 1, "inter_op_num_threads": 3, "graph_optimization_level": 1, "enable_profiling": True}}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    given = ort.SessionOptions()
    sess = ort.InferenceSession(path, given)
    options = sess.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads, options.enable_profiling) == (1, 3, True)
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert not given.enable_profiling and given.inter_op_num_threads == 0  # the caller's options stay as they were
    assert os.path.isfile(sess.end_profiling())
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "0")
    assert not ort.InferenceSession(path).get_session_options().enable_profiling


def test_run_options(mul_model):
    sess = ort.InferenceSession(mul_model)
    ro = ort.RunOptions()
    ro.logid = "run"
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    np.testing.assert_array_equal(sess.run(None, {"X": X}, ro)[0], X * W)
    ro.terminate = True
    with pytest.raises(ort.Fail, match="terminate flag"):
        sess.run(None, {"X": X}, ro)


def test_ort_values(mul_model):
    value = ort.OrtValue.ortvalue_from_numpy(X)
    assert (value.device_name(), value.shape(), value.data_type(), value.element_type()) == ("cpu", [3, 2], "tensor(float)", 1)
    assert value.is_tensor() and value.has_value() and not value.is_tensor_sequence()
    assert value.data_ptr() == X.ctypes.data  # the array's memory, as ONNX Runtime shares it on the CPU
    copy = value.numpy()
    copy[0, 0] = 100
    assert X[0, 0] == 1.0
    sess = ort.InferenceSession(mul_model)
    np.testing.assert_array_equal(sess.run(["Y"], {"X": value})[0], X * W)
    outputs = sess.run_with_ort_values(["Y"], {"X": value})
    assert isinstance(outputs, ort.OrtValueVector) and outputs[0].shape() == [3, 2]
    np.testing.assert_array_equal(outputs[0].numpy(), X * W)
    empty = ort.OrtValue.ortvalue_from_shape_and_type([2, 2], np.int64)
    empty.update_inplace(np.arange(4, dtype=np.int64))
    np.testing.assert_array_equal(empty.numpy(), [[0, 1], [2, 3]])
    with pytest.raises(ort.InvalidArgument, match="does not fit"):
        empty.update_inplace(np.arange(3, dtype=np.int64))
    with pytest.raises(ort.NotImplemented, match="device 'cuda'"):
        ort.OrtValue.ortvalue_from_numpy(X, "cuda", 0)


def test_io_binding(mul_model):
    sess = ort.InferenceSession(mul_model)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X * W)
    # An output bound to an OrtValue is written in place; inputs bound by pointer are read there.
    out = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32)
    x2 = X + 1
    by_pointer = sess.io_binding()
    by_pointer.bind_input("X", "cpu", 0, np.float32, [3, 2], x2.ctypes.data)
    by_pointer.bind_ortvalue_output("Y", out)
    sess.run_with_iobinding(by_pointer)
    np.testing.assert_array_equal(out.numpy(), x2 * W)
    assert by_pointer.get_outputs()[0] is out
    buffer = np.zeros((3, 2), np.float32)
    raw = sess.io_binding()
    raw.bind_ortvalue_input("X", ort.OrtValue.ortvalue_from_numpy(X))
    raw.bind_output("Y", "cpu", 0, np.float32, [3, 2], buffer.ctypes.data)
    sess.run_with_iobinding(raw)
    np.testing.assert_array_equal(buffer, X * W)
    wrong = sess.io_binding()
    wrong.bind_cpu_input("X", X)
    wrong.bind_ortvalue_output("Y", ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32))
    with pytest.raises(ort.InvalidArgument, match="the buffer bound to it is float32 \\[2, 3\\]"):
        sess.run_with_iobinding(wrong)
    with pytest.raises(ort.NotImplemented, match="device 'cuda'"):
        wrong.bind_output("Y", "cuda")
    empty = sess.io_binding()
    empty.bind_cpu_input("X", X)
    with pytest.raises(ort.InvalidArgument, match="bind at least one output"):
        sess.run_with_iobinding(empty)


def test_model_metadata(mul_model):
    meta = ort.InferenceSession(mul_model).get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.domain, meta.version) == ("ort_models.py", "mul_graph", "tilebank.test", 7)
    assert (meta.description, meta.graph_description) == ("the model's description", "the graph's description")
    assert meta.custom_metadata_map == {"author": "tilebank", "purpose": "tests"}


def test_profile_is_onnx_runtimes_chrome_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = "mine"
    sess = ort.InferenceSession(dynamic_matmul(tmp_path / "dyn.onnx"), so)
    assert sess.get_profiling_start_time_ns() > 0
    for batch in (1, 2):
        sess.run(None, {"X": np.ones((batch, 4), np.float32)})
    name = sess.end_profiling()
    assert name.startswith("mine_") and name.endswith(".json")
    lines = open(name).read().splitlines()
    assert lines[0] == "[" and lines[-1] == "]"
    events = json.loads("\n".join(lines))
    assert all(e["ph"] == "X" and {"pid", "tid", "ts", "dur", "name", "args", "cat"} <= set(e) for e in events)
    assert [e["name"] for e in events if e["cat"] == "Session"] == ["model_loading_uri", "model_run", "model_run"]
    nodes = [e for e in events if e["cat"] == "Node"]
    assert nodes and all(e["name"].endswith("_kernel_time") and e["args"]["provider"] == "TilebankExecutionProvider" for e in nodes)
    assert {"op_name", "template", "policy", "source", "layout"} <= set(nodes[0]["args"])
    assert ort.InferenceSession(dynamic_matmul(tmp_path / "dyn.onnx")).end_profiling() == ""


def test_run_async_and_threads(mul_model):
    import threading
    sess = ort.InferenceSession(mul_model)
    done = threading.Event()
    got = {}

    def callback(outputs, user_data, error):
        got.update(outputs=outputs, user_data=user_data, error=error)
        done.set()

    sess.run_async(["Y"], {"X": X}, callback, "mine")
    assert done.wait(30)
    assert got["error"] == "" and got["user_data"] == "mine"
    np.testing.assert_array_equal(got["outputs"][0], X * W)
    done.clear()
    sess.run_async(["Y"], {"X": X.astype(np.float64)}, callback, None)
    assert done.wait(30) and "Unexpected input data type" in got["error"]
    results = []
    workers = [threading.Thread(target=lambda: results.append(sess.run(None, {"X": X})[0])) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4 and all(np.array_equal(r, X * W) for r in results)


def test_module_functions_and_refusals():
    assert ort.get_device() == "CPU" and "Build Info" in ort.get_build_info() and ort.get_version_string() == ort.__version__ == "1.17.0"
    assert ort.tilebank_version == tilebank.__version__
    with pytest.warns(RuntimeWarning, match="changes nothing"):
        ort.set_seed(3)
    assert "NotImplemented" not in ort.__all__
    ort.set_default_logger_severity(3)
    with pytest.raises(RuntimeError):
        ort.set_default_logger_severity(7)
    with pytest.raises(ort.NotImplemented, match="shares no allocator"):
        ort.create_and_register_allocator(ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT), None)
    cfg = ort.OrtArenaCfg({"max_mem": 16, "arena_extend_strategy": 1})
    assert (cfg.max_mem, cfg.arena_extend_strategy, cfg.initial_chunk_size_bytes) == (16, 1, -1)
    coo = ort.SparseTensor.sparse_coo_from_numpy([4, 4], np.array([1.0, 2.0], np.float32), np.array([1, 5]), ort.OrtDevice.make("cpu", 0))
    assert coo.format() == ort.OrtSparseFormat.ORT_SPARSE_COO and coo.data_type() == "sparse_tensor(float)"
    assert coo.as_coo_view().indices().tolist() == [1, 5] and not coo.values().flags.writeable


def test_scripts_importing_onnxruntime_run_unchanged(tmp_path, mul_model):
    """install_as_onnxruntime(): `import onnxruntime` and its capi modules load tilebank's (in a
    child process, so this one's modules stay as they are)."""
    script = tmp_path / "script.py"
    script.write_text(f"""
import numpy as np
import tilebank.onnxruntime
tilebank.onnxruntime.install_as_onnxruntime()
import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument
from onnxruntime.capi import _pybind_state as C
sess = ort.InferenceSession({mul_model!r}, providers=C.get_available_providers())
x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
print(sess.run(None, {{sess.get_inputs()[0].name: x}})[0].sum())
try:
    sess.run(None, {{"X": x.astype(np.float64)}})
except InvalidArgument:
    print("caught")
""")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(float((X * W).sum())), "caught"]


def test_the_bank_through_provider_options_and_config_entries(tmp_path, monkeypatch, mul_model):
    """A bank named by the provider's options or a session config entry is the one the session
    opens (an unreadable one is refused, naming it), and the one the model's steps bind: int8 nodes
    OPAT stored run from it ("source": "bank" in the profile)."""
    unreadable = tmp_path / "unreadable"
    (unreadable / tilebank.soc_version()).mkdir(parents=True)
    (unreadable / tilebank.soc_version() / "data.mdb").write_bytes(b"not a bank" * 100)
    configured = ort.SessionOptions()
    configured.add_session_config_entry("tilebank.bank", str(unreadable))
    for args in ({"providers": [("TilebankExecutionProvider", {"bank": str(unreadable)})]}, {"sess_options": configured}):
        with pytest.raises(tilebank.Error, match="opening bank at '.*unreadable"):
            ort.InferenceSession(mul_model, **args)
    from qdq_models import qdq_cnn
    root = str(tmp_path / "bank")
    model = qdq_cnn(tmp_path / "cnn_int8.onnx")
    monkeypatch.setenv("TILEBANK_DEFAULT_POLICIES", "template")  # the reference as baseline: oneDNN's implementations win
    tilebank.tune(model, job_type=2, bank=root, trials=4, progress=False, output_dir=str(tmp_path / "out"))
    monkeypatch.delenv("TILEBANK_DEFAULT_POLICIES")
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(5).uniform(-2, 2, (1, 3, 32, 32)).astype(np.float32)
    stored = {e["op_type"] for e in tilebank.Bank(root) if e["op_type"] in ("QLinearConv", "QLinearMatMul")}

    def sources(**session_args):
        so = session_args.pop("so", ort.SessionOptions())
        so.enable_profiling = True
        sess = ort.InferenceSession(model, so, **session_args)
        sess.run(None, {"x": x})
        events = json.load(open(sess.end_profiling()))
        return {e["args"]["source"] for e in events if e["cat"] == "Node" and e["args"]["op_name"] in ("QLinearConv", "QLinearMatMul")}

    (tmp_path / "empty").mkdir()
    assert "bank" not in sources(providers=[("TilebankExecutionProvider", {"bank": str(tmp_path / "empty")})])
    if not stored:  # a job keeps an entry only where the model is faster with it beyond the spread
        pytest.skip("the tuning job kept no int8 entry on this run's timings")
    assert "bank" in sources(providers=[("TilebankExecutionProvider", {"bank": root})])
    by_entry = ort.SessionOptions()
    by_entry.add_session_config_entry("tilebank.bank", root)
    assert "bank" in sources(so=by_entry)


def test_backend(mul_model, tmp_path):
    """onnxruntime.backend: ONNX's backend interface (prepare, run_model) on tilebank."""
    import onnx
    import tilebank.onnxruntime.backend as backend
    for model in (mul_model, open(mul_model, "rb").read(), onnx.load(mul_model)):
        rep = backend.prepare(model, "CPU", intra_op_num_threads=1)
        np.testing.assert_array_equal(rep.run([X])[0], X * W)
        np.testing.assert_array_equal(rep.run({"X": X})[0], X * W)
        np.testing.assert_array_equal(rep.run(X)[0], X * W)
    np.testing.assert_array_equal(backend.run_model(mul_model, [X])[0], X * W)
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    assert backend.is_opset_supported(onnx.load(mul_model)) == (True, "")
    rep = backend.prepare(mul_model, colour="red", log_severity_level=3)  # not an option: left alone, as ONNX Runtime does
    assert rep.session.get_session_options().log_severity_level == 3
    with pytest.raises(ort.InvalidArgument, match="2 inputs given; the model has 1"):
        backend.prepare(mul_model).run([X, X])
    with pytest.raises(NotImplementedError, match="tilebank runs whole models"):
        backend.run_node(onnx.load(mul_model).graph.node[0], [X])
    assert isinstance(ort.backend.TilebankBackend(), onnx.backend.base.Backend)


def test_scalars_float16_and_integer_inputs(tmp_path):
    sess = ort.InferenceSession(scalars_and_types(tmp_path / "scalars.onnx"))
    h = np.array([1.5, -2.25], np.float16)
    for s, n in ((np.array(2.5, np.float32), np.array(4, np.int64)), (2.5, 4), (ort.OrtValue.ortvalue_from_numpy(np.array(2.5, np.float32)),
                                                                               ort.OrtValue.ortvalue_from_numpy(np.array(4)))):
        y, h2 = sess.run(None, {"s": s, "n": n, "h": h})
        assert y.shape == () and y == 10.0
        assert h2.dtype == np.float16 and h2.tolist() == h.tolist()
    assert ort.OrtValue.ortvalue_from_numpy(np.array(2.5, np.float32)).shape() == []  # 0-d stays 0-d
    with pytest.raises(ort.InvalidArgument, match="Unexpected input data type. Actual: \\(tensor\\(int32\\)\\)"):
        sess.run(None, {"s": np.float32(1), "n": np.array(4, np.int32), "h": h})


def test_sequences_and_optional_inputs_left_out(tmp_path):
    sess = ort.InferenceSession(sequence_model(tmp_path / "seq.onnx"))
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]
    n, c, has, split = sess.run(None, {"s": parts})  # "o" is optional: left out, it is empty
    assert n == 2 and c.shape == (4, 3) and not has and len(split) == 4
    assert sess.run(["has"], {"s": parts, "o": np.zeros(3, np.float32)})[0]


def test_overridable_initializers_and_old_ir_models(tmp_path):
    sess = ort.InferenceSession(mul_by_w_ir(tmp_path / "ir4.onnx", 4, w_listed=True))
    assert [(o.name, o.shape) for o in sess.get_overridable_initializers()] == [("W", [3, 2])]
    assert [i.name for i in sess.get_inputs()] == ["X"]
    with pytest.raises(ort.InvalidArgument, match="Feeding the initializer 'W'"):
        sess.run(None, {"X": X, "W": X})
    # IR 3: every initializer is a constant (none overridable); one not listed among the inputs is
    # read as ONNX Runtime reads it, though ONNX's checker refuses the file.
    for listed in (True, False):
        old = ort.InferenceSession(mul_by_w_ir(tmp_path / f"ir3_{listed}.onnx", 3, w_listed=listed))
        assert old.get_overridable_initializers() == []
        np.testing.assert_array_equal(old.run(None, {"X": X})[0], X * W)


def test_set_providers_rebinds(mul_model):
    sess = ort.InferenceSession(mul_model, providers=["CPUExecutionProvider"])
    sess.set_providers(["TilebankExecutionProvider"], [{"bank": os.path.dirname(mul_model)}])
    assert sess.get_providers() == ["TilebankExecutionProvider"]
    assert sess.get_provider_options()["TilebankExecutionProvider"]["bank"] == os.path.dirname(mul_model)
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], X * W)
    with pytest.warns(UserWarning, match="does not exist: the session runs with the built-in choices"):
        ort.InferenceSession(mul_model, providers=[("TilebankExecutionProvider", {"bank": "/no/such/bank"})])


def test_ort_values_of_onnx_types_and_vectors(mul_model):
    bits = np.array([0x3C00, 0xC000], np.uint16)  # 1.0 and -2.0 as float16
    half = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, 10)
    assert half.data_type() == "tensor(float16)" and half.numpy().tolist() == [1.0, -2.0] and half.element_type() == 10
    brain = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.array([0x3F80, 0x4040], np.uint16), 16)  # bfloat16 1.0, 3.0
    assert brain.numpy().tolist() == [1.0, 3.0]
    with pytest.raises(ort.InvalidArgument, match="cannot be read as ONNX element type 1"):
        ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, 1)
    assert ort.OrtValue.ortvalue_from_shape_and_type([2], 7).numpy().dtype == np.int64  # ONNX's INT64 number
    sess = ort.InferenceSession(mul_model)
    fetches = ort.OrtValueVector()
    sess.run_with_ortvaluevector(ort.RunOptions(), ["X"], [ort.OrtValue.ortvalue_from_numpy(X)], ["Y"], fetches, [None])
    assert len(fetches) == 1 and np.array_equal(fetches[0].numpy(), X * W)


def test_io_binding_cleared(mul_model):
    sess = ort.InferenceSession(mul_model)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    binding.clear_binding_outputs()
    assert binding.get_outputs() == []
    with pytest.raises(ort.InvalidArgument, match="bind at least one output"):
        sess.run_with_iobinding(binding)
    binding.bind_output("Y", "cpu", 0, 1, [3, 2], np.zeros((3, 2), np.float32).ctypes.data)  # ONNX's FLOAT number as element type
    binding.clear_binding_inputs()
    with pytest.raises(ValueError, match="Required inputs"):
        sess.run_with_iobinding(binding)


def test_initializers_of_a_model_with_external_data(tmp_path):
    path = mul_by_w_external(tmp_path / "external.onnx")
    assert os.path.isfile(tmp_path / "weights.bin")
    so = ort.SessionOptions()
    so.add_initializer("W", ort.OrtValue.ortvalue_from_numpy(np.ones((3, 2), np.float32)))
    np.testing.assert_array_equal(ort.InferenceSession(path, so).run(None, {"X": X})[0], X)
    wrong = ort.SessionOptions()
    wrong.add_initializer("W", ort.OrtValue.ortvalue_from_numpy(np.ones((2,), np.float32)))
    with pytest.raises(ort.InvalidArgument, match=r"is float32 3x2; the value given is float32 2"):
        ort.InferenceSession(path, wrong)


def test_temporary_copies_go_with_the_session(mul_model):
    import gc
    sess = ort.InferenceSession(open(mul_model, "rb").read())
    temp = sess._temp_dir
    assert os.path.isdir(temp)
    del sess
    gc.collect()
    assert not os.path.exists(temp)


def test_a_session_keeps_its_last_eight_shapes(tmp_path, monkeypatch):
    sess = ort.InferenceSession(dynamic_matmul(tmp_path / "dyn.onnx"))
    for batch in range(1, 11):
        sess.run(None, {"X": np.ones((batch, 4), np.float32)})
    assert sess._sess.native.bound_shapes == 8
    monkeypatch.chdir(tmp_path.parent)  # the model's path was made absolute: a new shape still reads it
    assert sess.run(["Z"], {"X": np.zeros((11, 4), np.float32)})[0].shape == (11, 4)


def test_errors_survive_copying():
    import copy
    import pickle
    error = ort.InvalidArgument("bad")
    assert str(copy.copy(error)) == str(error) == str(pickle.loads(pickle.dumps(error))) == "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : bad"
