"""QDQ models on int8 kernels: each Conv, MatMul and Gemm with its Q/DQ pairs runs as one int8 node,
and the outputs are those of the float path (the Q/DQ nodes computed as ONNX defines them) within
one step of the output's scale (a few steps without VNNI, where the weights are halved to 7 bits)."""
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
    # One step of y's scale with 8-bit weights; without VNNI the kernels halve the weights (7 bits),
    # which costs a few steps more.
    steps = 1 if tilebank._native.int8_weight_bits() == 8 else 8
    assert worst <= steps * out_scale * 1.01, (worst, out_scale, steps)
    return fast


def test_qdq_cnn_runs_int8_convolutions_and_gemm(tmp_path):
    x = np.random.default_rng(3).uniform(-2, 2, (1, 3, 32, 32)).astype(np.float32)
    # Left in float: the input's QuantizeLinear, GlobalAveragePool between its DQ and Q, the output's DQ; the MaxPool
    # runs on the 8-bit tensor (oneDNN's u8 pooling).
    check(qdq_cnn(tmp_path / "cnn.onnx"), x, 0.05, {"QLinearConv": 3, "QLinearMatMul": 1, "QLinearAdd": 1, "MaxPool": 1, "QuantizeLinear": 2,
                                                     "DequantizeLinear": 2})


def test_qdq_mlp_runs_int8_matmuls_with_bias_and_relu(tmp_path):
    x = np.random.default_rng(4).uniform(-3, 3, (1, 8, 64)).astype(np.float32)
    check(qdq_mlp(tmp_path / "mlp.onnx"), x, 0.04, {"QLinearMatMul": 2})


def test_quantize_writes_a_qdq_model_that_runs_int8(tmp_path, build_dir):
    import subprocess
    import onnx
    from onnx import numpy_helper
    from models import conv_relu
    float_model = conv_relu(tmp_path / "float.onnx")
    calib = tmp_path / "calib"
    rng = np.random.default_rng(0)
    for s in range(4):
        (calib / ("set_%d" % s)).mkdir(parents=True)
        x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
        (calib / ("set_%d" % s) / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    out = tmp_path / "int8.onnx"
    cli = os.path.join(build_dir, "tilebank")
    q = subprocess.run([cli, "quantize", "-m", float_model, "--calibrate", str(calib), "-o", str(out)], capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    assert "quantized 1 operators" in q.stdout and "SQNR" in q.stdout
    sqnr = float(q.stdout.split("SQNR ")[1].split(" dB")[0])
    assert sqnr > (25 if tilebank._native.int8_weight_bits() == 8 else 18), q.stdout
    m = onnx.load(str(out))
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("QuantizeLinear") == 2 and ops.count("DequantizeLinear") == 3
    x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
    expected = tilebank.InferenceSession(float_model).run(None, {"x": x})[0]
    s = tilebank.InferenceSession(str(out))
    got = s.run(None, {"x": x})[0]
    assert [r["op_type"] for r in s.profile(repeat=1)].count("QLinearConv") == 1
    assert np.abs(got - expected).max() < 0.05 * np.abs(expected).max()
    # Bad input: exit 2, a message naming it, nothing written.
    bad = subprocess.run([cli, "quantize", "-m", float_model, "--calibrate", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x.onnx")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--calibrate" in bad.stderr and not (tmp_path / "x.onnx").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = subprocess.run([cli, "quantize", "-m", float_model, "--calibrate", str(empty), "-o", str(tmp_path / "x.onnx")], capture_output=True, text=True)
    assert bad.returncode == 2 and "no input_0.pb" in bad.stderr and not (tmp_path / "x.onnx").exists()


def test_run_data_compares_a_quantized_model_within_its_output_steps(tmp_path, build_dir):
    """Test data written by another runtime (here the float path) may differ by a rounding at the
    last requantization: `run --data` allows two steps of the output's scale and says so."""
    import subprocess
    from onnx import numpy_helper
    path = qdq_cnn(tmp_path / "cnn.onnx")
    x = np.random.default_rng(5).uniform(-2, 2, (1, 3, 32, 32)).astype(np.float32)
    expected, _ = outputs(path, x, False)
    data = tmp_path / "test_data_set_0"
    data.mkdir()
    (data / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(expected, "y").SerializeToString())
    r = subprocess.run([os.path.join(build_dir, "tilebank"), "run", "-m", path, "--data", str(data), "--repeat", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "quantized outputs within two steps of their scale" in r.stdout
    # Off by three steps somewhere: that is a difference.
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(expected + np.float32(3 * 0.05) * (np.arange(expected.size) == 0).reshape(expected.shape),
                                                               "y").SerializeToString())
    r = subprocess.run([os.path.join(build_dir, "tilebank"), "run", "-m", path, "--data", str(data), "--repeat", "1"], capture_output=True, text=True)
    assert r.returncode == 1 and "OUTPUTS DIFFER" in r.stdout


def test_quantize_dynamic_runs_fused_int8_matmuls(tmp_path, build_dir):
    import subprocess
    import onnx
    from models import conv_relu, matmul_relu
    float_model, _ = matmul_relu(tmp_path / "mlp.onnx", batch=4, k=64, n=32)
    out = tmp_path / "dyn.onnx"
    cli = os.path.join(build_dir, "tilebank")
    q = subprocess.run([cli, "quantize", "--dynamic", "-m", float_model, "-o", str(out)], capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    assert "quantized 1 operators dynamically" in q.stdout and "4 random input sets" in q.stdout
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops.count("DynamicQuantizeLinear") == 1 and ops.count("MatMulInteger") == 1 and "MatMul" not in ops
    x = np.random.default_rng(6).standard_normal((4, 64)).astype(np.float32)
    expected = tilebank.InferenceSession(float_model).run(None, {"x": x})[0]
    s = tilebank.InferenceSession(str(out))
    got = s.run(None, {"x": x})[0]
    assert [r["op_type"] for r in s.profile({"x": x}, repeat=1)].count("DynamicQuantizedMatMul") == 1
    seven_bit = tilebank._native.int8_weight_bits() == 7  # the fused kernel's weights are halved without VNNI
    assert np.abs(got - expected).max() < (0.06 if seven_bit else 0.03) * np.abs(expected).max()
    os.environ["TILEBANK_QDQ_FUSION"] = "off"  # the unfused nodes compute the same
    try:
        unfused = tilebank.InferenceSession(str(out)).run(None, {"x": x})[0]
    finally:
        del os.environ["TILEBANK_QDQ_FUSION"]
    assert np.abs(got - unfused).max() < (0.04 if seven_bit else 0.01) * np.abs(expected).max()
    # A model without MatMul or Gemm, and static quantization without calibration, are refused.
    bad = subprocess.run([cli, "quantize", "--dynamic", "-m", conv_relu(tmp_path / "conv.onnx"), "-o", str(tmp_path / "x.onnx")], capture_output=True, text=True)
    assert bad.returncode == 2 and "no MatMul or Gemm" in bad.stderr and not (tmp_path / "x.onnx").exists()
    bad = subprocess.run([cli, "quantize", "-m", float_model, "-o", str(tmp_path / "x.onnx")], capture_output=True, text=True)
    assert bad.returncode == 2 and "--calibrate DIR is required" in bad.stderr


def test_int8_and_float_models_tune_into_one_bank(tmp_path):
    """OPAT tunes the int8 nodes' oneDNN implementation (template int8.onednn) into the bank, keyed by
    their dtypes, beside the float model's entries; the int8 model then runs the stored choices."""
    from models import conv_relu
    root = str(tmp_path / "bank")
    int8_model = qdq_cnn(tmp_path / "cnn_int8.onnx")
    # Against the registry's reference kernel (TILEBANK_DEFAULT_POLICIES=template: no library as the
    # baseline) each int8 node's best oneDNN implementation wins, whichever it is on this host.
    os.environ["TILEBANK_DEFAULT_POLICIES"] = "template"
    try:
        tuned = tilebank.tune(int8_model, job_type=2, bank=root, trials=4, progress=False, output_dir=str(tmp_path / "out8"))
    finally:
        del os.environ["TILEBANK_DEFAULT_POLICIES"]
    assert tuned.tasks, tuned.result
    int8_entries = [e for e in tilebank.Bank(root) if e["op_type"] in ("QLinearConv", "QLinearMatMul")]
    assert int8_entries, ([(t.get("name"), t.get("status"), t.get("before_us"), t.get("after_us")) for t in tuned.tasks], tuned.result[1]["OPAT"].get("repo_summary"), tuned.result[1]["OPAT"].get("model_result_performance(ms)"))
    for e in int8_entries:
        assert e["template"]["id"] == "int8.onednn" and list(e["policy"]) == ["impl"], e
        assert {t["dtype"] for t in e["descriptor"]["in"]} >= {"uint8", "int8", "float32"}, e["descriptor"]
    # A float model tuned into the same bank keeps them: its operators are other keys (float32 operands).
    tilebank.tune(conv_relu(tmp_path / "conv.onnx"), job_type=2, bank=root, trials=3, progress=False, output_dir=str(tmp_path / "out32"))
    bank = tilebank.Bank(root)
    assert [e for e in bank if e["op_type"] in ("QLinearConv", "QLinearMatMul")] == int8_entries
    float_twin = dict(int8_entries[0]["descriptor"])
    float_twin = {"op": "Conv", "input_desc": [{"shape": t["shape"], "type": "float32", "format": t["format"]} for t in float_twin["in"][:1]],
                  "output_desc": [{"shape": t["shape"], "type": "float32", "format": t["format"]} for t in float_twin["out"]]}
    assert bank.query(float_twin)["state"] != "hit" or bank.query(float_twin)["key"] not in {e["key"] for e in int8_entries}
    assert bank.validate() == []
    # The int8 model binds the bank's entries: the implementations OPAT chose are the ones that run.
    rows = tilebank.InferenceSession(int8_model, bank=root).profile(repeat=2)
    from_bank = [r for r in rows if r["op_type"] in ("QLinearConv", "QLinearMatMul") and r["source"] == "bank"]
    assert len(from_bank) >= len(int8_entries) and all(r["template"] == "int8.onednn" for r in from_bank), rows
    # The stored implementations compute what oneDNN's first choice computes.
    x = np.random.default_rng(5).uniform(-2, 2, (1, 3, 32, 32)).astype(np.float32)
    with_bank = tilebank.InferenceSession(int8_model, bank=root).run(None, {"x": x})[0]
    without = tilebank.InferenceSession(int8_model, bank=str(tmp_path / "empty")).run(None, {"x": x})[0]
    assert np.abs(with_bank - without).max() <= 0.05 * 1.01 * (1 if tilebank._native.int8_weight_bits() == 8 else 8)
