"""Sequences and optionals through tilebank.InferenceSession (lists and None), and check(): test data
judged as `tilebank run --data` judges it (dtype, shape, ONNX's tolerances)."""
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import tilebank
from models import matmul_relu, sequence_model


def test_a_sequence_goes_in_as_a_list_and_comes_out_as_one(tmp_path):
    s = tilebank.InferenceSession(sequence_model(tmp_path / "seq.onnx"), bank=str(tmp_path / "no_bank"))
    parts = [np.full((2, 3), k, np.float32) for k in range(3)]
    n, c, has, out = s.run(None, {"s": parts, "o": np.ones(3, np.float32)})
    assert int(n) == 3
    np.testing.assert_array_equal(c, np.concatenate(parts, axis=0))
    assert bool(has)
    assert isinstance(out, list) and len(out) == 6 and all(p.shape == (1, 3) for p in out)
    _, _, has, _ = s.run(None, {"s": parts, "o": None})  # an empty optional
    assert not bool(has)
    with pytest.raises(tilebank.InvalidInputError, match="is a sequence: give a list of arrays"):
        s.run(None, {"s": np.zeros((2, 3), np.float32), "o": None})


def write_data(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for k, (name, a) in enumerate(inputs):
        with open(os.path.join(directory, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    for k, (name, a) in enumerate(outputs):
        with open(os.path.join(directory, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())


def test_check_judges_test_data_as_run_data_does(tmp_path):
    path, (w, b) = matmul_relu(tmp_path / "mm.onnx", batch=2, k=4, n=3)
    s = tilebank.InferenceSession(path, bank=str(tmp_path / "no_bank"))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    y = np.maximum(x @ numpy_helper.to_array(w) + numpy_helper.to_array(b), 0).astype(np.float32)
    write_data(tmp_path / "good", [("x", x)], [("y", y)])
    assert s.check(str(tmp_path / "good"))["ok"]
    write_data(tmp_path / "transposed", [("x", x)], [("y", np.ascontiguousarray(y.T))])  # 6 values, the wrong shape
    verdict = s.check(str(tmp_path / "transposed"))
    assert not verdict["ok"] and "shape 2x3 where 3x2 was expected" in verdict["worst"]
    write_data(tmp_path / "float64", [("x", x)], [("y", y.astype(np.float64))])
    verdict = s.check(str(tmp_path / "float64"))
    assert not verdict["ok"] and "dtype float32 where float64 was expected" in verdict["worst"]
    with pytest.raises(tilebank.NotFoundError):
        s.check(str(tmp_path / "nowhere"))
