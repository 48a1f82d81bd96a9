#!/usr/bin/env python3
"""int8 against FP32 and ONNX Runtime, side by side in one run: each model exported from PyTorch
(scripts/export_models.py), quantized by `tilebank quantize` (static, calibrated on its test input and
random inputs of the same shape), then timed in alternated rounds (bench/alternate.py), every system on the test data's inputs, as tilebank FP32, tilebank int8
(the QDQ model on its int8 kernels) and ONNX Runtime 1.30 on the same QDQ model (onnxruntime-node's CPU
provider, which fuses QDQ into its own int8 kernels). Prints the medians, the goals (int8 at most
ONNX Runtime's int8 time; int8 at least 1.7x tilebank's FP32 on ResNet-50 and 1.5x on BERT-base), each
model's SQNR, and the worst error of both int8 runs against the float model's output.

  /usr/bin/python3 bench/int8_bench.py --build build [--threads 2] [--rounds 3] [--repeat 10] [--tune TRIALS] [MODELS...]

With --tune, each int8 model is first tuned by OPAT (`tilebank tune -j 2`, TRIALS candidates per
operator) into a bank of its own, made afresh, and a fourth column times it bound to that bank
("int8 tuned": the oneDNN implementation OPAT chose for each int8 node, the float ops' entries);
the goals are then judged on the tuned time.

A model named NAME:dynamic is quantized with `tilebank quantize --dynamic` (MatMuls only, no calibration).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
from alternate import alternate  # noqa: E402  bench/alternate.py

GOAL_OVER_FP32 = {"resnet50": 1.7, "bert_base": 1.5}


def tilebank_column(build, model_dir, data, threads, warmup, repeat, bank=None):
    """`tilebank run` on the test data's inputs (those ONNX Runtime gets) as a column for alternate()."""
    def column():
        p = subprocess.run([os.path.join(build, "tilebank"), "run", "-m", os.path.join(model_dir, "model.onnx"), "--data", data,
                            "--bank", bank or os.path.join(model_dir, "no_bank"), "--threads", str(threads), "--warmup", str(warmup),
                            "--repeat", str(repeat), "--json"], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise SystemExit("int8_bench: tilebank run failed on %s: %s" % (model_dir, p.stderr.strip()))
        answer = json.loads(p.stdout)
        return answer["latency_ms"]["median"], answer
    return column


def calibration(model_dir, work, sets, seed=0):
    """The test input and `sets - 1` random inputs like it (token ids within the test input's range)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    calib = os.path.join(work, "calibration")
    shutil.rmtree(calib, ignore_errors=True)
    shutil.copytree(os.path.join(model_dir, "test_data_set_0"), os.path.join(calib, "set_0"))
    rng = np.random.default_rng(seed)
    k = 0
    while os.path.exists(os.path.join(model_dir, "test_data_set_0", "input_%d.pb" % k)):
        k += 1
    tensors = []
    for i in range(k):
        t = onnx.TensorProto()
        with open(os.path.join(model_dir, "test_data_set_0", "input_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        tensors.append((t.name, numpy_helper.to_array(t)))
    for s in range(1, sets):
        os.makedirs(os.path.join(calib, "set_%d" % s))
        for i, (name, a) in enumerate(tensors):
            if a.dtype.kind == "f":
                r = (rng.standard_normal(a.shape) * a.std() + a.mean()).astype(a.dtype)
            elif a.max() > 1:  # token ids
                r = rng.integers(0, a.max() + 1, a.shape).astype(a.dtype)
            else:  # masks
                r = a.copy()
            with open(os.path.join(calib, "set_%d" % s, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(r, name).SerializeToString())
    return calib


def errors(outputs, reference):
    import numpy as np
    a, b = np.asarray(outputs, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    noise = ((a - b) ** 2).sum()
    return float(np.abs(a - b).max()), float(10 * np.log10((b ** 2).sum() / noise)) if noise > 0 else float("inf")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--calibration-sets", type=int, default=8)
    parser.add_argument("--tune", type=int, default=0, metavar="TRIALS", help="OPAT-tune each int8 model first (TRIALS per operator) and time it tuned too")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "tilebank", "int8"))
    parser.add_argument("models", nargs="*", default=["resnet50", "mobilenet_v2", "bert_base"])
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(build, "python"))
    import export_models
    import ort_anchor
    import tilebank
    from onnx import numpy_helper  # noqa: F401
    cache = os.path.join(os.path.expanduser("~"), ".cache", "tilebank", "models")
    rows = []
    for name in args.models:
        base, _, mode = name.partition(":")
        model_dir = export_models.export(base, cache)
        work = os.path.join(args.work, name.replace(":", "_"))
        os.makedirs(work, exist_ok=True)
        calib = calibration(model_dir, work, args.calibration_sets)
        int8_dir = os.path.join(work, "int8")
        os.makedirs(int8_dir, exist_ok=True)
        q = subprocess.run([os.path.join(build, "tilebank"), "quantize", "-m", os.path.join(model_dir, "model.onnx"), "--calibrate", calib,
                            "-o", os.path.join(int8_dir, "model.onnx")] + (["--dynamic"] if mode == "dynamic" else []), capture_output=True, text=True)
        if q.returncode:
            raise SystemExit("int8_bench: tilebank quantize failed on %s: %s" % (name, q.stderr.strip()))
        sqnr_line = next((l for l in q.stdout.splitlines() if "SQNR" in l), "")
        shutil.rmtree(os.path.join(int8_dir, "test_data_set_0"), ignore_errors=True)
        shutil.copytree(os.path.join(model_dir, "test_data_set_0"), os.path.join(int8_dir, "test_data_set_0"))
        data = os.path.join(model_dir, "test_data_set_0")
        bank = os.path.join(work, "bank")
        columns = {"fp32": tilebank_column(build, model_dir, data, args.threads, args.warmup, args.repeat),
                   "int8": tilebank_column(build, int8_dir, data, args.threads, args.warmup, args.repeat)}
        if args.tune:
            shutil.rmtree(bank, ignore_errors=True)
            t = subprocess.run([os.path.join(build, "tilebank"), "tune", "-j", "2", "-m", os.path.join(int8_dir, "model.onnx"), "--bank", bank,
                                "--trials", str(args.tune), "-q", "--output", os.path.join(work, "tuning")],
                               capture_output=True, text=True)
            if t.returncode:
                raise SystemExit("int8_bench: tilebank tune failed on %s: %s" % (name, t.stderr.strip()))
            columns["int8_tuned"] = tilebank_column(build, int8_dir, data, args.threads, args.warmup, args.repeat, bank)

        def ort_column():
            result = ort_anchor.run(os.path.join(int8_dir, "model.onnx"), data, args.threads, args.warmup, args.repeat)
            return result.median_ms, result
        columns["ort_int8"] = ort_column
        # Alternated in rounds (bench/alternate.py), every system on the same inputs: the test data's.
        med, times, last = alternate(columns, args.rounds)
        ort = last["ort_int8"]
        reference = ort_anchor.read_outputs(data)[0]
        inputs = dict(ort_anchor.read_inputs(os.path.join(model_dir, "model.onnx"), data))
        ours = tilebank.InferenceSession(os.path.join(int8_dir, "model.onnx"), bank=os.path.join(work, "no_bank")).run(None, inputs)[0]
        tb_err, tb_sqnr = errors(ours, reference)
        ort_err, ort_sqnr = errors(ort.outputs[0], reference)
        rows.append((name, med, sqnr_line, tb_err, tb_sqnr, ort_err, ort_sqnr))
        print("%s: %s" % (name, json.dumps({k: [round(x, 3) for x in v] for k, v in times.items()})), flush=True)

    tuned = "int8_tuned" in rows[0][1] if rows else False
    print("\n%-14s %10s %10s %12s %12s %12s %14s   %s" % ("model", "fp32 ms", "int8 ms", "int8 tuned", "ORT int8 ms", "int8/ORT", "fp32/int8",
                                                      "goals" + (" (int8 tuned)" if tuned else "")))
    for name, med, _, _, _, _, _ in rows:
        ours = med["int8_tuned"] if tuned else med["int8"]
        vs_ort, over_fp32 = ours / med["ort_int8"], med["fp32"] / ours
        goals = ["<= 1.0x ORT int8: %s" % ("met" if vs_ort <= 1.0 else "not met")]
        if name.split(":")[0] in GOAL_OVER_FP32:
            goal = GOAL_OVER_FP32[name.split(":")[0]]
            goals.append(">= %.1fx FP32: %s" % (goal, "met" if over_fp32 >= goal else "not met"))
        print("%-14s %10.2f %10.2f %12s %12.2f %11.2fx %13.2fx   %s" % (name, med["fp32"], med["int8"], "%.2f" % med["int8_tuned"] if tuned else "-",
                                                               med["ort_int8"], vs_ort, over_fp32, "; ".join(goals)))
    print("\naccuracy against the float model's output (PyTorch's, the test data):")
    for name, _, sqnr_line, tb_err, tb_sqnr, ort_err, ort_sqnr in rows:
        within = tb_err <= 2 * ort_err
        print("%-14s tilebank int8 worst %.4g (SQNR %.1f dB), ONNX Runtime int8 worst %.4g (SQNR %.1f dB): %s; quantize: %s" % (
            name, tb_err, tb_sqnr, ort_err, ort_sqnr, "within 2x of ORT's" if within else "NOT within 2x of ORT's", sqnr_line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
