#!/usr/bin/python3
"""Whole models side by side, in one run, on the same thread count, batch 1: PyTorch 1.13 eager and
TorchScript (trace, freeze, optimize_for_inference), tilebank with default policies, and tilebank
after `tune -j 2 --model`; each model's GFLOP and its share of the fp32 FMA peak measured beside it
(build/fma_peak). Every time is the median of --repeat runs after warm-up. The goals of issue 13
are printed with each row, met or not.

  usage: bench/model_bench.py [--threads 2] [--repeat 30] [--bank DIR] [--build build] [MODEL ...]
         (models: resnet50 resnet18 mobilenet_v2 bert_base, or other torchvision classifiers)

The tuned bank defaults to $XDG_CACHE_HOME/tilebank/bench_bank: the first run tunes each model
(its wall time is the "OPAT" column), later runs find every policy there (all hits).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import export_models  # noqa: E402  (scripts/export_models.py)
import torch  # noqa: E402

GOALS = {  # model: (reference, at most this many times its time)
    "resnet50": ("torchscript", 1.0),
    "resnet18": ("torchscript", 1.0),
    "mobilenet_v2": ("torchscript", 1.3),
    "bert_base": ("eager", 0.4),
}


def median_ms(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def pytorch_times(name, threads, warmup, repeat):
    torch.set_num_threads(threads)
    model, x = export_models.build(name)
    with torch.no_grad():
        eager = median_ms(lambda: model(x), warmup, repeat)
        scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x).eval()))
        ts = median_ms(lambda: scripted(x), warmup, repeat)
    return eager, ts


def tilebank(build, args, threads):
    cmd = [os.path.join(build, "tilebank")] + args
    env = dict(os.environ)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"model_bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def run_json(build, model_dir, bank, threads, warmup, repeat, kernel_cache):
    p = tilebank(build, ["run", "-m", os.path.join(model_dir, "model.onnx"), "--data", os.path.join(model_dir, "test_data_set_0"),
                         "--bank", bank, "--threads", str(threads), "--warmup", str(warmup), "--repeat", str(repeat), "--json"], threads,
                 kernel_cache)
    return json.loads(p.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=list(GOALS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parser.add_argument("--bank", default=os.path.join(cache, "tilebank", "bench_bank"))
    parser.add_argument("--trials", type=int, default=48, help="tuning: candidates per operator (the default budget)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    rows = []
    for name in args.models:
        model_dir = export_models.export(name, os.path.join(cache, "tilebank", "models"))
        print(f"== {name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as kernels:
            tune = [ "tune", "-j", "2", "-m", os.path.join(model_dir, "model.onnx"), "--bank", args.bank, "--output", out,
                    "--trials", str(args.trials)]
            start = time.perf_counter()
            tuned_run = tilebank(args.build, tune, args.threads)
            tune_s = time.perf_counter() - start
            opat = None
            for f in os.listdir(out):
                if f.startswith("aoe_result_opat_"):
                    opat = json.load(open(os.path.join(out, f)))[1]["OPAT"]
            hits = opat["repo_summary"]["repo_hit_num"] if opat else 0
            total = opat["repo_summary"]["total_num"] if opat else 0
            # Side by side: the anchors, then tilebank default and tuned, then the peak.
            eager, ts = pytorch_times(name, args.threads, args.warmup, args.repeat)
            # Each configuration runs twice on a kernel cache that starts empty: a cold load, then a warm one.
            default_cold = run_json(args.build, model_dir, empty, args.threads, 1, 1, kernels)
            default = run_json(args.build, model_dir, empty, args.threads, args.warmup, args.repeat, kernels)
            run_json(args.build, model_dir, args.bank, args.threads, 1, 1, kernels)
            tuned = run_json(args.build, model_dir, args.bank, args.threads, args.warmup, args.repeat, kernels)
            peak = json.loads(subprocess.run([os.path.join(args.build, "fma_peak"), str(args.threads)], capture_output=True, text=True).stdout)
        gflop = tuned["gflop"]
        t_ms = tuned["latency_ms"]["median"]
        ref_kind, bound = GOALS.get(name, ("torchscript", 1.0))
        ref = ts if ref_kind == "torchscript" else eager
        rows.append({
            "model": name, "gflop": gflop, "eager_ms": eager, "torchscript_ms": ts, "default_ms": default["latency_ms"]["median"],
            "tuned_ms": t_ms, "peak_gflops": peak["fma_gflops"], "tuned_peak_share": gflop / (t_ms / 1e3) / peak["fma_gflops"],
            "tuned_vs_ref": t_ms / ref, "ref": ref_kind, "bound": bound, "speedup_vs_default": default["latency_ms"]["median"] / t_ms,
            "check": tuned.get("check", {}).get("ok"), "load_s": tuned["load_s"],
            "default_load_cold_s": default_cold["load_s"], "default_load_warm_s": default["load_s"], "tune_s": tune_s, "hits": f"{hits}/{total}",
        })
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"\nmodel_bench: {args.threads} threads, batch 1, median of {args.repeat} runs after {args.warmup} warm-up; "
          f"bank {args.bank}")
    head = ("model", "GFLOP", "eager ms", "TS ms", "default ms", "tuned ms", "% peak", "tuned/ref", "goal", "vs default", "check",
            "load s", "def. cold", "def. warm", "tune s", "hits")
    print(("{:<13}" + "{:>11}" * (len(head) - 1)).format(*head))
    for r in rows:
        met = "met" if r["tuned_vs_ref"] <= r["bound"] else "NOT met"
        print(("{:<13}" + "{:>11}" * (len(head) - 1)).format(
            r["model"], f"{r['gflop']:.2f}", f"{r['eager_ms']:.1f}", f"{r['torchscript_ms']:.1f}", f"{r['default_ms']:.1f}",
            f"{r['tuned_ms']:.1f}", f"{100 * r['tuned_peak_share']:.1f}%", f"{r['tuned_vs_ref']:.2f}x {r['ref'][:2]}",
            f"<={r['bound']} {met[:3]}", f"{r['speedup_vs_default']:.2f}x", "ok" if r["check"] else "DIFFERS",
            f"{r['load_s']:.2f}", f"{r['default_load_cold_s']:.2f}", f"{r['default_load_warm_s']:.2f}", f"{r['tune_s']:.0f}", r["hits"]))
    print("load s: tuned, warm kernel cache; def. cold / def. warm: default policies, empty kernel cache / its second load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
