"""tilebank.InferenceSession against numpy: outputs, dtypes, rebinding per shape, errors as exceptions."""
import numpy as np
import pytest

import tilebank
from models import matmul_relu, token_embedding
from onnx import numpy_helper


def test_run_matches_numpy_and_rebinds_per_shape(tmp_path):
    path, (w, b) = matmul_relu(tmp_path / "mm.onnx")
    s = tilebank.InferenceSession(path, bank=str(tmp_path / "no_bank"))
    inputs = s.get_inputs()
    assert inputs == [{"name": "x", "shape": ["batch", 64], "dtype": "float32"}]
    assert s.get_outputs()[0]["name"] == "y"
    W, B = numpy_helper.to_array(w), numpy_helper.to_array(b)
    for batch in (1, 3, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)
        (y,) = s.run(None, {"x": x})
        assert y.shape == (batch, 32) and y.dtype == np.float32
        np.testing.assert_allclose(y, np.maximum(x @ W + B, 0), rtol=1e-4, atol=1e-4)
    assert s.bound_shapes == 2  # batch 1 was kept
    # A strided view is read as its values.
    x = np.random.default_rng(7).standard_normal((64, 2)).astype(np.float32).T
    np.testing.assert_allclose(s(({"x": x}))[0], np.maximum(x @ W + B, 0), rtol=1e-4, atol=1e-4)
    (y,) = s.run(["y"], {"x": x})
    assert y.flags.writeable


def test_typed_inputs_profile_and_benchmark(tmp_path):
    s = tilebank.InferenceSession(token_embedding(tmp_path / "embed.onnx"))
    ids = np.array([[0, 3, 49, 3, 7]], dtype=np.int64)
    (y,) = s.run(None, {"ids": ids})
    np.testing.assert_array_equal(y, np.arange(50 * 8, dtype=np.float32).reshape(50, 8)[ids])
    profile = s.profile(repeat=2)
    assert profile and {"name", "op_type", "time_us", "template", "source"} <= set(profile[0])
    bench = s.benchmark(repeat=3, warmup=1)
    assert bench["runs"] == 3 and bench["median_ms"] > 0


def test_errors_raise_with_the_cli_messages(tmp_path):
    path, _ = matmul_relu(tmp_path / "mm.onnx", batch=2)
    s = tilebank.InferenceSession(path)
    with pytest.raises(tilebank.InvalidInputError, match="expects float32, got numpy float64"):
        s.run(None, {"x": np.zeros((2, 64))})
    with pytest.raises(tilebank.InvalidInputError, match="has shape \\[3, 64\\]; the model declares \\[2, 64\\]"):
        s.run(None, {"x": np.zeros((3, 64), np.float32)})
    with pytest.raises(tilebank.InvalidInputError, match="input 'x' .* is missing"):
        s.run(None, {})
    with pytest.raises(tilebank.InvalidInputError, match="'z' is not an input"):
        s.run(None, {"x": np.zeros((2, 64), np.float32), "z": np.zeros(1)})
    with pytest.raises(tilebank.InvalidInputError, match="'nope' is not an output"):
        s.run(["nope"], {"x": np.zeros((2, 64), np.float32)})
    with pytest.raises(ValueError):  # InvalidInputError is a ValueError too
        s.benchmark(repeat=0)
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(tilebank.InvalidInputError, match="bad.onnx"):
        tilebank.InferenceSession(str(tmp_path / "bad.onnx"))
    with pytest.raises(tilebank.NotFoundError):
        tilebank.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(tilebank.RefusedError, match="this machine's soc_version"):
        tilebank.InferenceSession(path, soc="other-soc")
