#!/usr/bin/python3
"""Two builds of tilebank side by side on the same models (an empty bank, the built-in choices): the
"nothing gets slower" check of a change. Each round runs every model once with each build, the builds
alternated (which goes first swaps each round), `run --repeat N --json` giving one median per run; the
table shows each build's minimum over the rounds and their ratio.

  usage: bench/builds_bench.py --before OLD/tilebank --after NEW/tilebank [--threads 2] [--repeat 10]
                               [--rounds 5] [--models-dir DIR] MODEL ...
         (models: any name scripts/export_models.py knows; exported to --models-dir first)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_ms(binary, model_dir, threads, repeat, bank):
    data = os.path.join(model_dir, "test_data_set_0")
    p = subprocess.run([binary, "run", "-m", os.path.join(model_dir, "model.onnx"), "--data", data, "--bank", bank, "--threads", str(threads),
                        "--warmup", "2", "--repeat", str(repeat), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{binary} on {model_dir}: exit {p.returncode}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    result = json.loads(p.stdout)
    if not result.get("check", {}).get("ok", False):
        raise RuntimeError(f"{binary} on {model_dir}: outputs differ from the test data")
    return result["latency_ms"]["median"]


def main():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models-dir", default=os.path.join(cache, "tilebank", "models"))
    args = ap.parse_args()
    for b in (args.before, args.after):
        if not os.access(b, os.X_OK):
            ap.error(f"{b} is not an executable tilebank")
    if args.rounds < 1 or args.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")
    p = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "export_models.py"), "--dir", args.models_dir] + args.models,
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"builds_bench: export failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
        return 2
    dirs = p.stdout.strip().splitlines()[-len(args.models):]
    times = {m: {"before": [], "after": []} for m in args.models}
    with tempfile.TemporaryDirectory() as bank:
        try:
            for r in range(args.rounds):
                order = ("before", "after") if r % 2 == 0 else ("after", "before")
                for model, model_dir in zip(args.models, dirs):
                    for which in order:
                        times[model][which].append(run_ms(getattr(args, which), model_dir, args.threads, args.repeat, bank))
        except RuntimeError as e:  # a build that refuses a model (one from before run --data fixed dynamic dims, say)
            print(f"builds_bench: {e}", file=sys.stderr)
            return 2
    print(f"{'model':24} {'before ms':>10} {'after ms':>10} {'after/before':>13}   (minimum over {args.rounds} alternated rounds of median of {args.repeat})")
    for model in args.models:
        before, after = min(times[model]["before"]), min(times[model]["after"])
        print(f"{model:24} {before:10.2f} {after:10.2f} {after / before:12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
