#!/usr/bin/python3
"""An ONNX Runtime script run on tilebank with one import changed, beside ONNX Runtime itself.

The script (`ort_script` below) is written as ONNX Runtime users write one: SessionOptions with
threads and the optimization level, providers=["CPUExecutionProvider"], input names and types from
NodeArg, inputs as OrtValues, run(), then run_with_iobinding() with the outputs bound to OrtValues.
It runs with `ort` = tilebank.onnxruntime on each model of the zoo named, and ONNX Runtime 1.30
(onnxruntime-node, bench/ort_anchor.py; `scripts/setup.sh --ort`) runs the same inputs. Prints per
model: whether the outputs match (ONNX's judgement: rtol 1e-3, atol 1e-4 of the largest |value|),
the largest difference, and each one's median latency (the two alternated in rounds; tilebank's
through the Python API, ONNX Runtime's in its Node.js process).

  /usr/bin/python3 bench/ort_dropin.py [--build build] [--rounds 3] [--repeat 10] [MODEL ...]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
DEFAULT_MODELS = ["mobilenet_v2", "resnet18", "transformer_encoder", "lstm_classifier", "gru_forecaster", "moe_block",
                  "audio_encoder", "unet", "kv_decoder"]


def ort_script(ort, model_path, feeds, threads):
    """What an ONNX Runtime user writes. Returns (outputs of run, outputs of run_with_iobinding, the
    session)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])
    inputs = {}
    for arg, array in zip(sess.get_inputs(), feeds):
        assert arg.type.startswith("tensor("), arg
        inputs[arg.name] = ort.OrtValue.ortvalue_from_numpy(array)
    names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(names, inputs)
    binding = sess.io_binding()
    for name, value in inputs.items():
        binding.bind_ortvalue_input(name, value)
    for name, array in zip(names, outputs):
        binding.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_shape_and_type(array.shape, array.dtype.type))
    sess.run_with_iobinding(binding)
    return outputs, binding.copy_outputs_to_cpu(), sess


def largest_difference(got, want):
    worst, ok = 0.0, True
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            return float("inf"), False
        if g.size == 0:
            continue
        diff = np.abs(g - w)
        worst = max(worst, float(diff.max()))
        ok = ok and bool((diff <= 1e-4 * max(float(np.abs(w).max()), 1e-2) + 1e-3 * np.abs(w)).all())
    return worst, ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    parser.add_argument("--build", default="build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--models-dir", default=os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tilebank", "models"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    import ort_anchor
    import tilebank.onnxruntime as ort
    if not ort_anchor.available():
        sys.exit("ort_dropin: ONNX Runtime is not installed (bash scripts/setup.sh --ort)")
    exported = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "export_models.py"), "--dir", args.models_dir]
                              + args.models, capture_output=True, text=True)
    if exported.returncode != 0:
        sys.exit("ort_dropin: export failed: " + exported.stderr.strip().splitlines()[-1])
    print(f"{'model':22} {'outputs':8} {'largest diff':>12} {'tilebank ms':>12} {'ORT ms':>8} {'ratio':>6}")
    matched = 0
    for name, model_dir in zip(args.models, exported.stdout.strip().splitlines()[-len(args.models):]):
        model = os.path.join(model_dir, "model.onnx")
        data = os.path.join(model_dir, "test_data_set_0")
        feeds = [array for _, array in ort_anchor.read_inputs(model, data)]
        outputs, bound, sess = ort_script(ort, model, feeds, args.threads)
        reference = ort_anchor.run(model, data, threads=args.threads, warmup=1, repeat=1)
        diff, ok = largest_difference(outputs, reference.outputs)
        _, bound_ok = largest_difference(bound, outputs)
        ok = ok and bound_ok
        matched += ok
        feed = {arg.name: array for arg, array in zip(sess.get_inputs(), feeds)}
        ours, theirs = [], []
        for _ in range(args.rounds):
            times = []
            for _ in range(args.repeat + 1):
                start = time.perf_counter()
                sess.run(None, feed)
                times.append((time.perf_counter() - start) * 1e3)
            ours.append(statistics.median(times[1:]))
            theirs.append(ort_anchor.run(model, data, threads=args.threads, warmup=1, repeat=args.repeat).median_ms)
        t, o = min(ours), min(theirs)
        print(f"{name:22} {'match' if ok else 'DIFFER':8} {diff:12.3g} {t:12.2f} {o:8.2f} {t / o:5.2f}x", flush=True)
    print(f"\n{matched} of {len(args.models)} models: the script's outputs match ONNX Runtime's "
          f"(run and run_with_iobinding alike); latency: each side's best of {args.rounds} alternated rounds' medians of {args.repeat}")


if __name__ == "__main__":
    main()
