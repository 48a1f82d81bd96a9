#!/usr/bin/python3
"""Issue 50's goals for the model zoo, beside ONNX Runtime in one run: each model's latency (tilebank
on an empty bank and ONNX Runtime 1.30, graph optimizations "all", the two alternated for --rounds
rounds, each side's best median of --repeat runs), its load time (kernel cache warm) and its peak
resident memory, then the goals met or not, naming the models that miss each.

  usage: /usr/bin/python3 bench/zoo_bench.py [--build DIR] [--threads N] [--repeat N] [--rounds N] [NAME ...]

Names default to the families written for the issue (scripts/user_models.py) and torchvision's
common classifiers and two segmenters (TORCHVISION); each is exported into the models folder when missing
(scripts/export_models.py). Memory: each side's process's VmHWM. ONNX Runtime runs inside Node.js,
so its column subtracts a bare `node`'s VmHWM, measured in the same run (what ONNX Runtime's
library and the model add); tilebank's column is its whole process, nothing subtracted. int8 models
(the int8 family) also compare errors: each runtime's largest absolute difference from
PyTorch's output, tilebank's at most twice ONNX Runtime's. Exit status 0 whether or not the goals
are met; 2 when ONNX Runtime is not installed (scripts/setup.sh --ort) or a model does not run.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

# torchvision's models a user brings first, beside the issue's own families: every classifier family
# at its smaller sizes (the larger ones are the same ops, compute-bound at par) and two segmenters.
TORCHVISION = ["mobilenet_v2", "efficientnet_b0", "densenet121", "googlenet", "resnet50", "swin_t", "shufflenet_v2_x1_0",
               "mobilenet_v3_large", "mobilenet_v3_small", "squeezenet1_1", "mnasnet1_0", "inception_v3", "resnet18", "resnext50_32x4d",
               "regnet_y_400mf", "regnet_x_800mf", "efficientnet_b1", "efficientnet_v2_s", "vgg11", "alexnet", "convnext_tiny", "maxvit_t",
               "swin_v2_t", "vit_b_32", "shufflenet_v2_x0_5", "densenet169", "lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"]
SPEED_GOAL, NONE_SLOWER_THAN, INT8_ERROR_GOAL = 1.0, 1.1, 2.0


def default_names():
    import user_models
    return list(user_models.BUILDERS) + TORCHVISION


def bare_node_rss_mib():
    """A bare Node.js process's peak resident memory (what ONNX Runtime's column subtracts)."""
    script = "const l=require('fs').readFileSync('/proc/self/status','utf8').split('\\n').find(s=>s.startsWith('VmHWM:'));" \
             "console.log(parseInt(l.slice(6),10)/1024)"
    return float(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout.strip())


def bare_tilebank_rss_mib(build):
    """A tilebank process's peak resident memory running a one-node model (its libraries and
    runtime, nothing of a real model's): `run --json`'s own VmHWM, which starts afresh at exec. The
    node is an Identity, which no kernel runs, so Halide (opened only when a Halide kernel is built)
    stays out of the figure."""
    import tempfile
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "bare", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "bare.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        p = subprocess.run([os.path.join(build, "tilebank"), "run", "-m", path, "--bank", work, "--repeat", "1", "--json"], capture_output=True, text=True)
        return json.loads(p.stdout)["memory"]["peak_rss_mib"] if p.returncode == 0 else float("nan")


def largest_error(outputs, expected):
    import numpy as np
    worst = 0.0
    for got, want in zip(outputs, expected):
        if got.shape != want.shape:
            return float("inf")
        if np.issubdtype(want.dtype, np.floating):
            worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0)
    return worst


def measure(name, model_dir, args):
    import model_zoo
    import ort_anchor
    import user_models
    model = os.path.join(model_dir, "model.onnx")
    data = os.path.join(model_dir, "test_data_set_0")
    row = {"model": name, "int8": name in user_models.BUILDERS and "int8" in user_models.family(name)}
    model_zoo.tilebank_run(args, model, data, 1)  # the kernel cache warm before load is timed
    for _ in range(args.rounds):
        p, _ = model_zoo.tilebank_run(args, model, data, args.repeat)
        if p.returncode != 0 and not p.stdout.strip():
            raise RuntimeError(f"tilebank on {name}: " + (p.stderr.strip().splitlines() or ["?"])[-1])
        run = json.loads(p.stdout)
        if run["latency_ms"]["median"] < row.get("ms", float("inf")):
            row.update(ms=run["latency_ms"]["median"], load_s=run["load_s"], rss=run["memory"]["peak_rss_mib"],
                       error=run.get("check", {}).get("max_abs_error"), matches=run.get("check", {}).get("ok"))
        ort = ort_anchor.run(model, data, threads=args.threads, warmup=1, repeat=args.repeat)
        if ort.median_ms < row.get("ort_ms", float("inf")):
            row.update(ort_ms=ort.median_ms, ort_load_s=ort.load_ms / 1e3, ort_rss=ort.peak_rss_mib,
                       ort_error=largest_error(ort.outputs, ort_anchor.read_outputs(data)))
    return row


def goal_line(title, misses):
    return f"{title}: " + ("met" if not misses else "NOT met (" + ", ".join(misses) + ")")


def main():
    import model_zoo
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    model_zoo.add_run_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import ort_anchor
    if not ort_anchor.available():
        print("zoo_bench: ONNX Runtime is not installed: run scripts/setup.sh --ort", file=sys.stderr)
        return 2
    names = args.names or default_names()
    missing = [n for n in names if not os.path.exists(os.path.join(args.models_dir, n, "model.onnx"))]
    if missing:
        dirs, error = model_zoo.export(missing, args.models_dir)
        if dirs is None:
            print(f"zoo_bench: export failed: {error}", file=sys.stderr)
            return 2
    node_rss = bare_node_rss_mib()
    print(f"zoo_bench: {args.threads} threads, {args.rounds} rounds alternated, median of {args.repeat} runs; "
          f"ONNX Runtime's RSS less a bare node's {node_rss:.0f} MiB; a tilebank process running a one-node model "
          f"takes {bare_tilebank_rss_mib(args.build):.0f} MiB, counted in its column")
    print(f"{'model':22s} {'tilebank ms':>11s} {'ORT ms':>9s} {'ratio':>6s} {'load s':>7s} {'ORT load':>8s} {'RSS MiB':>8s} {'ORT RSS':>8s}")
    rows = []
    for name in names:
        try:
            row = measure(name, os.path.join(args.models_dir, name), args)
        except RuntimeError as e:
            print(f"zoo_bench: {e}", file=sys.stderr)
            return 2
        row["ort_rss_net"] = row["ort_rss"] - node_rss
        rows.append(row)
        print(f"{name:22s} {row['ms']:11.2f} {row['ort_ms']:9.2f} {row['ms'] / row['ort_ms']:6.2f} {row['load_s']:7.2f} "
              f"{row['ort_load_s']:8.2f} {row['rss']:8.0f} {row['ort_rss_net']:8.0f}", flush=True)
    slow = [f"{r['model']} {r['ms'] / r['ort_ms']:.2f}x" for r in rows if r["ms"] > SPEED_GOAL * r["ort_ms"]]
    far = [f"{r['model']} {r['ms'] / r['ort_ms']:.2f}x" for r in rows if r["ms"] > NONE_SLOWER_THAN * r["ort_ms"]]
    load = [f"{r['model']} {r['load_s']:.2f} s vs {r['ort_load_s']:.2f} s" for r in rows if r["load_s"] > r["ort_load_s"]]
    rss = [f"{r['model']} {r['rss']:.0f} vs {r['ort_rss_net']:.0f} MiB" for r in rows if r["rss"] > r["ort_rss_net"]]
    int8 = [r for r in rows if r["int8"]]
    int8_slow = [f"{r['model']} {r['ms'] / r['ort_ms']:.2f}x" for r in int8 if r["ms"] > SPEED_GOAL * r["ort_ms"]]
    int8_error = [f"{r['model']} {r['error']:.3g} vs {r['ort_error']:.3g}" for r in int8
                  if r["error"] is None or r["error"] > INT8_ERROR_GOAL * r["ort_error"]]
    print(goal_line(f"Goal: at most {SPEED_GOAL}x ONNX Runtime's time on every model", slow))
    print(goal_line(f"Goal: none slower than {NONE_SLOWER_THAN}x", far))
    print(goal_line("Goal: int8 at most ONNX Runtime's int8 time", int8_slow) + ("" if int8 else " (no int8 model run)"))
    print(goal_line(f"Goal: int8 error within {INT8_ERROR_GOAL}x ONNX Runtime's", int8_error) + ("" if int8 else " (no int8 model run)"))
    print(goal_line("Goal: load time at most ONNX Runtime's", load))
    print(goal_line("Goal: peak RSS at most ONNX Runtime's (a bare node's subtracted)", rss))
    return 0


if __name__ == "__main__":
    sys.exit(main())
