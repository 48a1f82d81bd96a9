"""QDQ models on int8 kernels: each Conv, MatMul and Gemm with its Q/DQ pairs runs as one int8 node,
and the outputs are those of the float path (the Q/DQ nodes computed as ONNX defines them) within
one step of the output's scale."""
import os

import numpy as np

import tilebank
from qdq_models import qdq_cnn, qdq_mlp


def outputs(path, x, fused):
    os.environ["TILEBANK_QDQ_FUSION"] = "on" if fused else "off"
    try:
        s = tilebank.InferenceSession(path)
        return s.run(None, {"x": x})[0], [row["op_type"] for row in s.profile(repeat=1)]
    finally:
        del os.environ["TILEBANK_QDQ_FUSION"]


def check(path, x, out_scale, fused_ops):
    fast, fast_ops = outputs(path, x, True)
    slow, slow_ops = outputs(path, x, False)
    assert "QLinearConv" not in slow_ops and "QLinearMatMul" not in slow_ops
    for op, count in fused_ops.items():
        assert fast_ops.count(op) == count, fast_ops
    worst = np.abs(fast - slow).max()
    assert worst <= out_scale * 1.01, (worst, out_scale)
    return fast


def test_qdq_cnn_runs_int8_convolutions_and_gemm(tmp_path):
    x = np.random.default_rng(3).uniform(-2, 2, (1, 3, 32, 32)).astype(np.float32)
    check(qdq_cnn(tmp_path / "cnn.onnx"), x, 0.05, {"QLinearConv": 3, "QLinearMatMul": 1})


def test_qdq_mlp_runs_int8_matmuls_with_bias_and_relu(tmp_path):
    x = np.random.default_rng(4).uniform(-3, 3, (1, 8, 64)).astype(np.float32)
    check(qdq_mlp(tmp_path / "mlp.onnx"), x, 0.04, {"QLinearMatMul": 2})
