#!/usr/bin/python3
"""Whole models side by side, in one run, on the same thread count, batch 1: PyTorch 1.13 eager and
TorchScript (trace, freeze, optimize_for_inference), tilebank with default policies, tilebank after
`tune -j 2 --model` (OPAT alone), and tilebank after `tune -j 1 --model` then `tune -j 2 --model`
(SGAT then OPAT, in a bank of its own; and again with the layouts decided across the model turned off,
TILEBANK_MODEL_LAYOUTS=row-major); each model's GFLOP and its share of the fp32 FMA peak
measured beside it (build/fma_peak). The columns run alternated in --rounds rounds (bench/alternate.py),
each a median of --repeat runs after warm-up; a column's time is the median of its round medians. The
goals of issues 13 (OPAT), 14 (SGAT) and 22 (transformers: BERT-base, ViT-B/16, a GPT-2-small
decoder) are printed with each row, met or not.

  usage: bench/model_bench.py [--threads 2] [--repeat 30] [--rounds 3] [--bank DIR] [--sgat-bank DIR] [--build build] [MODEL ...]
         (models: resnet50 resnet18 mobilenet_v2 bert_base vit_b_16 gpt_decoder, or other torchvision classifiers)
         bench/model_bench.py --defaults [MODEL ...]   before tuning: an empty bank against TorchScript
         bench/model_bench.py --off-shape              ResNet-50 at batch 8 with a bank tuned at batch 1
         bench/model_bench.py --against OLD_BUILD [MODEL ...]   this build's tilebank against another's (an
                                                       earlier commit's), empty banks, alternated: a change that
                                                       should not move speed, checked
         bench/model_bench.py --ort [--tuned] [--rounds 3] [MODEL ...]
                                                       against ONNX Runtime 1.30 (bench/ort_goals.py: issue 37's
                                                       goals, time per op type side by side)
         (bench/default_goals.py: the goals of issue 20)

The banks default to $XDG_CACHE_HOME/tilebank/bench_bank (OPAT) and bench_bank_sgat (SGAT then
OPAT): the first run tunes each model (wall times in the "tune s" columns), later runs find every
policy there (all hits).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from alternate import alternate  # bench/alternate.py: columns timed in alternated rounds
from default_goals import median_ms  # bench/default_goals.py: the timing both use

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
# PyTorch (and scripts/export_models.py, which needs it) are imported in main(), after the binaries
# are checked: a missing binary is found in seconds, not after the models are exported and tuned.
torch = None
export_models = None

GOALS = {  # model: (reference, at most this many times its time after OPAT, after SGAT then OPAT)
    "resnet50": ("torchscript", 1.0, 0.75),
    "resnet18": ("torchscript", 1.0, None),
    "mobilenet_v2": ("torchscript", 1.3, 0.85),
    "bert_base": ("eager", 0.4, 0.25),
    "vit_b_16": ("torchscript", 1.0, None),
    "gpt_decoder": ("eager", 1.0, None),
}
# Issue 22: each transformer after SGAT then OPAT at least this much faster than the better of
# PyTorch eager and TorchScript, and at least this share of the measured FMA peak.
TRANSFORMERS = ("bert_base", "vit_b_16", "gpt_decoder")
TRANSFORMER_SPEEDUP = 1.5
TRANSFORMER_PEAK_SHARE = 0.85
SGAT_OVER_OPAT = 1.15  # issue 14: SGAT then OPAT at least this much faster than OPAT alone
ORT_MODELS = ("resnet50", "mobilenet_v2", "bert_base", "vit_b_16", "gpt_decoder", "llama_decoder", "yolo_detector")  # --ort's default models (issue 37)


def pytorch_columns(name, threads, warmup, repeat):
    """PyTorch eager and TorchScript (traced, frozen, optimize_for_inference) as columns for alternate()."""
    torch.set_num_threads(threads)
    model, inputs, _, _ = export_models.build(name)
    with torch.no_grad():
        scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, inputs).eval()))

    def eager():
        with torch.no_grad():
            return median_ms(lambda: model(*inputs), warmup, repeat), None

    def script():
        with torch.no_grad():
            return median_ms(lambda: scripted(*inputs), warmup, repeat), None
    return eager, script


def tilebank_column(build, model_dir, bank, threads, warmup, repeat, kernel_cache, layouts=None, profile=False):
    """`tilebank run --json` on the model's test data as a column for alternate(): (median ms, its answer)."""
    def column():
        answer = run_json(build, model_dir, bank, threads, warmup, repeat, kernel_cache, layouts, profile)
        return answer["latency_ms"]["median"], answer
    return column


def tilebank(build, args, threads, kernel_cache=None, layouts=None):
    cmd = [os.path.join(build, "tilebank")] + args
    env = dict(os.environ)
    if layouts:
        env["TILEBANK_MODEL_LAYOUTS"] = layouts
    if kernel_cache:
        env["TILEBANK_KERNEL_CACHE"] = kernel_cache
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"model_bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def run_json(build, model_dir, bank, threads, warmup, repeat, kernel_cache, layouts=None, profile=False):
    p = tilebank(build, ["run", "-m", os.path.join(model_dir, "model.onnx"), "--data", os.path.join(model_dir, "test_data_set_0"),
                         "--bank", bank, "--threads", str(threads), "--warmup", str(warmup), "--repeat", str(repeat), "--json"]
                 + (["--profile"] if profile else []), threads, kernel_cache, layouts)
    return json.loads(p.stdout)


def time_by_op(profile):
    """A `run --profile --json` profile summed per op type (a fused binding counts as its anchor's
    type), largest first: [(op_type, nodes, ms)]."""
    totals = {}
    for node in profile:
        count, us = totals.get(node["op_type"], (0, 0.0))
        totals[node["op_type"]] = (count + 1, us + node["time_us"])
    return sorted(((op, n, us / 1e3) for op, (n, us) in totals.items()), key=lambda t: -t[2])


def tune_job(args, model, job_type, bank, out):
    """Runs `tune -j job_type` on the model; returns its result section and wall seconds."""
    cmd = ["tune", "-j", job_type, "-m", model, "--bank", bank, "--output", out, "--trials", str(args.trials)]
    if getattr(args, "tune_budget", 0):
        cmd += ["--time-budget", str(args.tune_budget)]
    if job_type == "2" and getattr(args, "precision_mode", "force_fp32") != "force_fp32":
        cmd += ["--precision-mode", args.precision_mode]
    start = time.perf_counter()
    p = tilebank(args.build, cmd, args.threads)
    seconds = time.perf_counter() - start
    for line in p.stdout.splitlines():  # the job's final comparison, what it measured and decided
        if line.startswith("model: ") or line.startswith("in context: "):
            print(f"  tune -j {job_type}: {line}", file=sys.stderr, flush=True)
    section = "OPAT" if job_type == "2" else "SGAT"
    for f in os.listdir(out):
        if f.startswith(f"aoe_result_{section.lower()}_"):
            return json.load(open(os.path.join(out, f)))[1][section], seconds
    return None, seconds


# The order issue 49's benches make a tuned bank in (bench/ort_goals.py, bench/tuning_curve.py; this
# file's default section keeps SGAT then OPAT in its sgat_opat column, issue 14's): OPAT first, then SGAT,
# so that SGAT keeps a fusion only where it beats the tuned operators (an SGAT entry made first fuses
# steps OPAT's larger gains, bf16 products, then cannot reach).
TUNED_JOBS = (("2", "opat"), ("1", "sgat"))


def tune_model(args, model, bank, out):
    """OPAT then SGAT into `bank` (TUNED_JOBS); returns both jobs' wall seconds."""
    return sum(tune_job(args, model, job, bank, os.path.join(out, where))[1] for job, where in TUNED_JOBS)


def summary_text(section):
    if not section:
        return "0/0"
    return f"{section['repo_summary']['repo_hit_num']}/{section['repo_summary']['total_num']}"


def ensure_binaries(build):
    """Builds tilebank and fma_peak into `build` when either is missing (the README's demo configures
    build/ with TILEBANK_BENCH=OFF, which leaves fma_peak out), before any long work starts."""
    needed = ["tilebank", "fma_peak"]
    if all(os.access(os.path.join(build, b), os.X_OK) for b in needed):
        return
    root = os.path.join(HERE, "..")
    print(f"model_bench: building {' and '.join(needed)} into {build} (TILEBANK_BENCH=ON)", file=sys.stderr, flush=True)
    try:
        subprocess.run(["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DTILEBANK_BENCH=ON"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count() or 1), "--target"] + needed, check=True)
    except (subprocess.CalledProcessError, OSError) as e:
        sys.exit(f"model_bench: cannot build {' and '.join(needed)} into {build}: {e}")
    missing = [b for b in needed if not os.access(os.path.join(build, b), os.X_OK)]
    if missing:
        sys.exit(f"model_bench: {', '.join(missing)} still missing from {build} after building")


ALL_BENCH_MODELS = ("resnet50", "resnet18", "mobilenet_v2", "bert_base", "vit_b_16", "gpt_decoder", "llama_decoder", "yolo_detector")


def against_section(args, models):
    """This build's tilebank and OLD_BUILD's on each model, empty banks (default policies), alternated
    in rounds on one kernel cache each: new/old per model, and whether it lies within the rounds'
    spread (the larger of the two columns' relative spreads of round medians, at least 3%)."""
    old_build = os.path.abspath(args.against)
    if not os.access(os.path.join(old_build, "tilebank"), os.X_OK):
        sys.exit(f"model_bench: no tilebank in {old_build}")
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    rows = []
    for name in models:
        model_dir = export_models.export(name, os.path.join(cache, "tilebank", "models"))
        print(f"== {name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as old_kernels, tempfile.TemporaryDirectory() as new_kernels:
            run_json(old_build, model_dir, empty, args.threads, 1, 1, old_kernels)  # each compiles its kernels once, untimed
            run_json(args.build, model_dir, empty, args.threads, 1, 1, new_kernels)
            ms, rounds_ms, last = alternate({
                "old": tilebank_column(old_build, model_dir, empty, args.threads, args.warmup, args.repeat, old_kernels),
                "new": tilebank_column(args.build, model_dir, empty, args.threads, args.warmup, args.repeat, new_kernels),
            }, args.rounds)

        def spread(column):
            values = rounds_ms[column]
            return (max(values) - min(values)) / ms[column]
        noise = max(0.03, spread("old"), spread("new"))
        ratio = ms["new"] / ms["old"]
        rows.append({"model": name, "old_ms": ms["old"], "new_ms": ms["new"], "ratio": ratio, "noise": noise,
                     "within": abs(ratio - 1) <= noise, "old_check": bool(last["old"].get("check", {}).get("ok")),
                     "new_check": bool(last["new"].get("check", {}).get("ok")),
                     "old_load_s": last["old"]["load_s"], "new_load_s": last["new"]["load_s"], "round_ms": rounds_ms})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"\nmodel_bench --against {old_build}: {args.threads} threads, batch 1, empty banks; each column the median over "
          f"{args.rounds} alternated rounds of its median of {args.repeat} runs after {args.warmup} warm-up")
    head = ("model", "old ms", "new ms", "new/old", "noise", "verdict", "check o/n", "old load s", "new load s")
    fmt = "{:<13}" + "{:>11}" * (len(head) - 1)
    print(fmt.format(*head))
    for r in rows:
        print(fmt.format(r["model"], f"{r['old_ms']:.2f}", f"{r['new_ms']:.2f}", f"{r['ratio']:.3f}", f"±{100 * r['noise']:.1f}%",
                         "within" if r["within"] else ("faster" if r["ratio"] < 1 else "SLOWER"),
                         ("ok" if r["old_check"] else "diff") + "/" + ("ok" if r["new_check"] else "DIFF"),
                         f"{r['old_load_s']:.2f}", f"{r['new_load_s']:.2f}"))
    print("noise: the larger relative spread (max - min) of either column's round medians, at least 3%; within: |new/old - 1| <= noise")
    print("check o/n: each build's outputs against the model's test data under ONNX's rtol 1e-3 + atol 1e-7 (run --data); a model"
          " whose float32 sums differ from PyTorch's beyond that differs in both")
    return 0 if all(r["within"] or r["ratio"] < 1 for r in rows) and all(r["new_check"] or not r["old_check"] for r in rows) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=list(GOALS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parser.add_argument("--bank", default=os.path.join(cache, "tilebank", "bench_bank"))
    parser.add_argument("--sgat-bank", default=os.path.join(cache, "tilebank", "bench_bank_sgat"))
    parser.add_argument("--trials", type=int, default=48, help="tuning: candidates per operator (the default budget)")
    parser.add_argument("--defaults", action="store_true", help="only the models with an empty bank against TorchScript")
    parser.add_argument("--off-shape", action="store_true", help="only ResNet-50 at batch 8 with a bank tuned at batch 1")
    parser.add_argument("--ort", action="store_true", help="only the models against ONNX Runtime (scripts/setup.sh --ort installs it)")
    parser.add_argument("--tuned", action="store_true", help="with --ort: also after SGAT then OPAT into a fresh bank")
    parser.add_argument("--tune-budget", type=float, default=150, help="with --tuned: seconds each of SGAT and OPAT may tune a model")
    parser.add_argument("--precision-mode", default="force_fp32", choices=("force_fp32", "allow_fp32_to_bf16"),
                        help="with --tuned: OPAT's precision mode (allow_fp32_to_bf16: bf16 kernels where the CPU has them)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the systems (each column's time: the median of its round medians)")
    parser.add_argument("--against", metavar="OLD_BUILD", help="only this build's tilebank against OLD_BUILD's, default policies, alternated")
    args = parser.parse_args()
    ensure_binaries(args.build)
    global torch, export_models
    import torch
    import export_models  # scripts/export_models.py
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if args.ort:
        import ort_goals
        ort_goals.ort_section(args, export_models, args.models if args.models != list(GOALS) else ORT_MODELS, run_json, tune_model)
        return 0
    if args.against:
        return against_section(args, args.models if args.models != list(GOALS) else ALL_BENCH_MODELS)
    if args.defaults or args.off_shape:
        import default_goals
        if args.defaults:
            default_goals.defaults_section(args, torch, export_models, args.models if args.models != list(GOALS) else default_goals.DEFAULT_MODELS)
        if args.off_shape:
            default_goals.off_shape_section(args, torch, export_models)
        return
    rows = []
    for name in args.models:
        model_dir = export_models.export(name, os.path.join(cache, "tilebank", "models"))
        print(f"== {name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as kernels:
            model = os.path.join(model_dir, "model.onnx")
            opat, tune_s = tune_job(args, model, "2", args.bank, os.path.join(out, "opat"))
            sgat, sgat_s = tune_job(args, model, "1", args.sgat_bank, os.path.join(out, "sgat"))
            sgat_opat, sgat_opat_s = tune_job(args, model, "2", args.sgat_bank, os.path.join(out, "sgat_opat"))
            # Side by side, alternated in rounds: the anchors, tilebank default, OPAT, SGAT+OPAT, and
            # SGAT+OPAT row-major; then the peak. Each configuration first loads once on a kernel
            # cache that starts empty (the default's is its cold load), so the timed loads are warm.
            default_cold = run_json(args.build, model_dir, empty, args.threads, 1, 1, kernels)
            run_json(args.build, model_dir, args.bank, args.threads, 1, 1, kernels)
            run_json(args.build, model_dir, args.sgat_bank, args.threads, 1, 1, kernels)
            eager_column, script_column = pytorch_columns(name, args.threads, args.warmup, args.repeat)
            ms, rounds_ms, last = alternate({
                "eager": eager_column, "torchscript": script_column,
                "default": tilebank_column(args.build, model_dir, empty, args.threads, args.warmup, args.repeat, kernels),
                "opat": tilebank_column(args.build, model_dir, args.bank, args.threads, args.warmup, args.repeat, kernels),
                "sgat_opat": tilebank_column(args.build, model_dir, args.sgat_bank, args.threads, args.warmup, args.repeat, kernels, profile=True),
                "row_major": tilebank_column(args.build, model_dir, args.sgat_bank, args.threads, args.warmup, args.repeat, kernels, "row-major"),
            }, args.rounds)
            eager, ts = ms["eager"], ms["torchscript"]
            default, tuned, fused = last["default"], last["opat"], last["sgat_opat"]
            peak = json.loads(subprocess.run([os.path.join(args.build, "fma_peak"), str(args.threads)], capture_output=True, text=True).stdout)
        gflop = tuned["gflop"]
        t_ms = ms["opat"]
        f_ms = ms["sgat_opat"]
        ref_kind, bound, sgat_bound = GOALS.get(name, ("torchscript", 1.0, None))
        ref = ts if ref_kind == "torchscript" else eager
        rows.append({
            "model": name, "gflop": gflop, "eager_ms": eager, "torchscript_ms": ts, "default_ms": ms["default"],
            "tuned_ms": t_ms, "sgat_opat_ms": f_ms, "sgat_row_major_ms": ms["row_major"], "peak_gflops": peak["fma_gflops"],
            "tuned_peak_share": gflop / (t_ms / 1e3) / peak["fma_gflops"], "sgat_peak_share": gflop / (f_ms / 1e3) / peak["fma_gflops"],
            "tuned_vs_ref": t_ms / ref, "sgat_vs_ref": f_ms / ref, "ref": ref_kind, "bound": bound, "sgat_bound": sgat_bound,
            "speedup_vs_default": ms["default"] / t_ms, "sgat_over_opat": t_ms / f_ms, "round_ms": rounds_ms,
            "check": tuned.get("check", {}).get("ok") and fused.get("check", {}).get("ok"), "load_s": tuned["load_s"],
            "default_load_cold_s": default_cold["load_s"], "default_load_warm_s": default["load_s"], "tune_s": tune_s,
            "sgat_tune_s": sgat_s + sgat_opat_s, "hits": summary_text(opat), "sgat_hits": summary_text(sgat),
            "sgat_opat_by_op": time_by_op(fused["profile"]),
        })
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"\nmodel_bench: {args.threads} threads, batch 1; each column the median over {args.rounds} alternated rounds of its "
          f"median of {args.repeat} runs after {args.warmup} warm-up; bank {args.bank}")
    head = ("model", "GFLOP", "eager ms", "TS ms", "default ms", "OPAT ms", "% peak", "OPAT/ref", "goal", "vs default", "check",
            "load s", "def. cold", "def. warm", "tune s", "hits")
    fmt = "{:<13}" + "{:>11}" * (len(head) - 1)
    print(fmt.format(*head))
    for r in rows:
        met = "met" if r["tuned_vs_ref"] <= r["bound"] else "NOT met"
        print(fmt.format(
            r["model"], f"{r['gflop']:.2f}", f"{r['eager_ms']:.1f}", f"{r['torchscript_ms']:.1f}", f"{r['default_ms']:.1f}",
            f"{r['tuned_ms']:.1f}", f"{100 * r['tuned_peak_share']:.1f}%", f"{r['tuned_vs_ref']:.2f}x {r['ref'][:2]}",
            f"<={r['bound']} {met[:3]}", f"{r['speedup_vs_default']:.2f}x", "ok" if r["check"] else "DIFFERS",
            f"{r['load_s']:.2f}", f"{r['default_load_cold_s']:.2f}", f"{r['default_load_warm_s']:.2f}", f"{r['tune_s']:.0f}", r["hits"]))
    print("load s: OPAT-tuned, warm kernel cache; def. cold / def. warm: default policies, empty kernel cache / its second load")
    head = ("model", "OPAT ms", "SGAT+OPAT", "row-major", "% peak", "vs ref", "goal", "vs OPAT", f"goal {SGAT_OVER_OPAT}x", "tune s", "SGAT hits")
    fmt = "{:<13}" + "{:>11}" * (len(head) - 1)
    print()
    print(fmt.format(*head))
    for r in rows:
        goal = "-" if r["sgat_bound"] is None else f"<={r['sgat_bound']} " + ("met" if r["sgat_vs_ref"] <= r["sgat_bound"] else "NOT")
        print(fmt.format(
            r["model"], f"{r['tuned_ms']:.1f}", f"{r['sgat_opat_ms']:.1f}", f"{r['sgat_row_major_ms']:.1f}", f"{100 * r['sgat_peak_share']:.1f}%",
            f"{r['sgat_vs_ref']:.2f}x {r['ref'][:2]}", goal, f"{r['sgat_over_opat']:.2f}x",
            "met" if r["sgat_over_opat"] >= SGAT_OVER_OPAT else "NOT met", f"{r['sgat_tune_s']:.0f}", r["sgat_hits"]))
    print("SGAT+OPAT: tune -j 1 then tune -j 2 into its own bank; row-major: the same with every tensor handed over row-major "
          "(TILEBANK_MODEL_LAYOUTS=row-major); tune s: both jobs' wall time")
    transformers = [r for r in rows if r["model"] in TRANSFORMERS]
    if transformers:
        head = ("model", "eager ms", "TS ms", "default ms", "SGAT+OPAT", "speedup", f"goal {TRANSFORMER_SPEEDUP}x", "% peak",
                f"goal {100 * TRANSFORMER_PEAK_SHARE:.0f}%")
        fmt = "{:<13}" + "{:>11}" * (len(head) - 1)
        print(f"\nissue 22, transformers: SGAT then OPAT against the better of PyTorch eager and TorchScript; FMA peak "
              f"{transformers[0]['peak_gflops']:.1f} GFLOP/s")
        print(fmt.format(*head))
        for r in transformers:
            speedup = min(r["eager_ms"], r["torchscript_ms"]) / r["sgat_opat_ms"]
            print(fmt.format(
                r["model"], f"{r['eager_ms']:.1f}", f"{r['torchscript_ms']:.1f}", f"{r['default_ms']:.1f}", f"{r['sgat_opat_ms']:.1f}",
                f"{speedup:.2f}x", "met" if speedup >= TRANSFORMER_SPEEDUP else "NOT met", f"{100 * r['sgat_peak_share']:.1f}%",
                "met" if r["sgat_peak_share"] >= TRANSFORMER_PEAK_SHARE else "NOT met"))
        print("\nwhere the time goes after SGAT then OPAT (`run --profile`, per op type; a fused kernel counts as its anchor): "
              "ms, share of the summed node times, nodes")
        for r in transformers:
            total = sum(ms for _, _, ms in r["sgat_opat_by_op"]) or 1
            print(f"{r['model']:<13}" + "  ".join(f"{op} {ms:.1f} ({100 * ms / total:.0f}%, {n})" for op, n, ms in r["sgat_opat_by_op"][:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
