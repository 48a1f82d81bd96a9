"""The goals of issue 20 for model_bench.py (--defaults, --off-shape): what a model runs at before
any tuning, and at a shape nobody tuned.

--defaults: each model with an empty bank, its op classes' built-in choices
  (engine/catalog/builtin_choice.h), beside TorchScript and beside the primary templates' analytical
  defaults (TILEBANK_DEFAULT_POLICIES=template, what an empty bank ran before). Goal: at most 1.0x
  TorchScript.
--off-shape: ResNet-50 exported with a dynamic batch; a bank tuned at batch 1 only (`tune -j 2`), then
  the model at batch 8 with that bank (every operator from the nearest shape's entry), with an empty
  bank, and TorchScript at batch 8; then `tune -j 2` at batch 8 into the same bank (starting from
  the batch-1 entries) and its share of the FMA peak. Goals: at most 1.0x TorchScript at batch 8
  with the batch-1 bank; at least 85% of the FMA peak after tuning at batch 8.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from alternate import alternate  # bench/alternate.py

DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "regnet_x_400mf", "densenet121", "convnext_tiny",
                  "swin_t", "vit_b_16", "bert_base", "transformer_encoder"]


def median_ms(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def torchscript_column(torch, model, inputs, threads, warmup, repeat):
    """TorchScript (traced, frozen, optimize_for_inference) as a column for alternate(): (median ms, None)."""
    torch.set_num_threads(threads)
    with torch.no_grad():
        scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, inputs).eval()))

    def column():
        with torch.no_grad():
            return median_ms(lambda: scripted(*inputs), warmup, repeat), None
    return column


def run(build, model, bank, args, extra=(), env_extra=None):
    cmd = [os.path.join(build, "tilebank"), "run", "-m", model, "--bank", bank, "--threads", str(args.threads),
           "--warmup", str(args.warmup), "--repeat", str(args.repeat), "--json"] + list(extra)
    env = dict(os.environ, **(env_extra or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"model_bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def run_column(build, model, bank, args, extra=(), env_extra=None):
    """`run` as a column for alternate(): (median ms, its JSON answer)."""
    def column():
        answer = run(build, model, bank, args, extra, env_extra)
        return answer["latency_ms"]["median"], answer
    return column


def defaults_section(args, torch, export_models, names):
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    rows = []
    for name in names:
        model_dir = export_models.export(name, os.path.join(cache, "tilebank", "models"))
        print(f"== {name} (defaults)", file=sys.stderr, flush=True)
        model_path = os.path.join(model_dir, "model.onnx")
        data = ["--data", os.path.join(model_dir, "test_data_set_0")]
        model, inputs, input_names, _ = export_models.build(name)
        shapes = ";".join(f"{n}:{','.join(str(d) for d in x.shape)}" for n, x in zip(input_names, inputs))
        data += ["--input-shape", shapes]
        with tempfile.TemporaryDirectory() as empty:
            # Side by side, alternated: TorchScript, tilebank's built-in choices, the templates' defaults.
            ms, _, last = alternate({
                "torchscript": torchscript_column(torch, model, inputs, args.threads, args.warmup, args.repeat),
                "builtin": run_column(args.build, model_path, empty, args, data),
                "template": run_column(args.build, model_path, empty, args, data, {"TILEBANK_DEFAULT_POLICIES": "template"}),
            }, args.rounds)
        ts, b_ms, t_ms, builtin = ms["torchscript"], ms["builtin"], ms["template"], last["builtin"]
        rows.append({"model": name, "gflop": builtin["gflop"], "torchscript_ms": ts, "builtin_ms": b_ms, "template_ms": t_ms,
                     "vs_ts": b_ms / ts, "check": builtin.get("check", {}).get("ok")})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"\ndefaults: {args.threads} threads, batch 1, empty bank; each column the median over {args.rounds} alternated rounds "
          f"of its median of {args.repeat} runs after {args.warmup} warm-up")
    head = ("model", "GFLOP", "TS ms", "built-in ms", "templates ms", "built-in/TS", "goal <=1.0x", "templates/built-in", "check")
    fmt = "{:<20}" + "{:>14}" * (len(head) - 3) + "{:>20}{:>8}"
    print(fmt.format(*head))
    for r in rows:
        print(fmt.format(r["model"], f"{r['gflop']:.2f}", f"{r['torchscript_ms']:.1f}", f"{r['builtin_ms']:.1f}", f"{r['template_ms']:.1f}",
                         f"{r['vs_ts']:.2f}x", "met" if r["vs_ts"] <= 1.0 else "NOT met", f"{r['template_ms'] / r['builtin_ms']:.2f}x",
                         "ok" if r["check"] else "DIFFERS"))
    return rows


def export_dynamic_batch(torch, export_models, name, directory):
    """`name` exported with its batch axis dynamic (input "input", output "output")."""
    path = os.path.join(directory, f"{name}_dynamic_batch", "model.onnx")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    model, inputs, input_names, _ = export_models.build(name)
    tmp = path + ".tmp"
    torch.onnx.export(model, inputs, tmp, opset_version=export_models.OPSET, input_names=input_names, output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True)
    os.replace(tmp, path)
    return path


def tune(args, model, shape, bank, out):
    cmd = [os.path.join(args.build, "tilebank"), "tune", "-j", "2", "-m", model, "--input-shape", shape, "--bank", bank, "--output", out,
           "--trials", str(args.trials)]
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"model_bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return time.perf_counter() - start


def off_shape_section(args, torch, export_models, name="resnet50", batch=8):
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    model_path = export_dynamic_batch(torch, export_models, name, os.path.join(cache, "tilebank", "models"))
    model, inputs, _, _ = export_models.build(name)
    big = (inputs[0].repeat(batch, 1, 1, 1),)
    side = inputs[0].shape[-1]
    one, eight = f"input:1,3,{side},{side}", f"input:{batch},3,{side},{side}"
    with tempfile.TemporaryDirectory() as work:
        bank, empty = os.path.join(work, "bank"), os.path.join(work, "empty")
        print(f"== {name}: tune -j 2 at batch 1", file=sys.stderr, flush=True)
        tune_1_s = tune(args, model_path, one, bank, os.path.join(work, "out1"))
        # Side by side, alternated: TorchScript at batch 8, tilebank with the batch-1 bank and with an
        # empty one; then tuned at batch 8 too, a copy of the batch-1 bank kept to time beside it.
        script = torchscript_column(torch, model, big, args.threads, args.warmup, args.repeat)
        bank_1 = os.path.join(work, "bank_batch1")
        shutil.copytree(bank, bank_1)
        print(f"== {name}: tune -j 2 at batch {batch}", file=sys.stderr, flush=True)
        tune_8_s = tune(args, model_path, eight, bank, os.path.join(work, "out8"))
        ms, _, last = alternate({
            "torchscript": script,
            "nearest": run_column(args.build, model_path, bank_1, args, ["--input-shape", eight]),
            "builtin": run_column(args.build, model_path, empty, args, ["--input-shape", eight]),
            "tuned": run_column(args.build, model_path, bank, args, ["--input-shape", eight]),
        }, args.rounds)
        nearest, builtin, tuned = last["nearest"], last["builtin"], last["tuned"]
        peak = json.loads(subprocess.run([os.path.join(args.build, "fma_peak"), str(args.threads)], capture_output=True, text=True).stdout)
    gflop = tuned["gflop"]
    ts, n_ms, b_ms, t_ms = ms["torchscript"], ms["nearest"], ms["builtin"], ms["tuned"]
    share = gflop / (t_ms / 1e3) / peak["fma_gflops"]
    print(f"\noff-shape: {name} at batch {batch}, {args.threads} threads; each column the median over {args.rounds} alternated rounds "
          f"of its median of {args.repeat} runs after {args.warmup} warm-up; "
          f"FMA peak {peak['fma_gflops']:.0f} GFLOP/s")
    head = ("configuration", "ms", "vs TS", "goal", "policies (bank/nearest/built-in)")
    fmt = "{:<34}{:>10}{:>10}{:>18}{:>34}"
    print(fmt.format(*head))
    pol = lambda r: "/".join(str(r["policies"][k]) for k in ("bank", "nearest", "builtin"))
    print(fmt.format(f"TorchScript batch {batch}", f"{ts:.1f}", "1.00x", "", ""))
    print(fmt.format("empty bank (built-in)", f"{b_ms:.1f}", f"{b_ms / ts:.2f}x", "", pol(builtin)))
    print(fmt.format(f"bank tuned at batch 1 ({tune_1_s:.0f} s)", f"{n_ms:.1f}", f"{n_ms / ts:.2f}x",
                     "<=1.0x " + ("met" if n_ms <= ts else "NOT met"), pol(nearest)))
    print(fmt.format(f"tuned at batch {batch} too ({tune_8_s:.0f} s)", f"{t_ms:.1f}", f"{t_ms / ts:.2f}x",
                     f"{100 * share:.1f}% peak " + ("met" if share >= 0.85 else "NOT"), pol(tuned)))
    return {"torchscript_ms": ts, "builtin_ms": b_ms, "nearest_ms": n_ms, "tuned_ms": t_ms, "peak_share": share,
            "tune_batch1_s": tune_1_s, "tune_batch8_s": tune_8_s}
