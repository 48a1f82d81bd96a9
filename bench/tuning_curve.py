#!/usr/bin/env python3
"""Gain against tuning time (issue 49): each model tuned into a fresh bank once per time budget
(OPAT then SGAT, each job half of the budget), then every bank and the empty one timed side by
side in alternated rounds. Prints, per budget, the job's wall time, the entries kept, the model's
time and its speedup over the empty bank, and what share of the longest budget's gain it reached.

  /usr/bin/python3 bench/tuning_curve.py resnet18 mobilenet_v2 --budgets 45,180,1800

The goal: at least 90% of a 30-minute run's gain within the first 3 minutes. Tasks are ordered by
their share of the model's time (ModelOpList) and a template's search stops after --patience
trials that made nothing faster, so a long budget is spent only where something moves.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
from alternate import alternate  # bench/alternate.py
import model_bench  # bench/model_bench.py: run_json, tune_job, ensure_binaries

EARLY_BUDGET_S = 180     # the goal's "first 3 minutes"
EARLY_SHARE_GOAL = 0.90  # of the longest budget's gain


def entries_in(build, bank):
    """Operator and subgraph entries in the bank (this host's soc_version)."""
    p = subprocess.run([os.path.join(build, "tilebank"), "bank", "stats", "--bank", bank, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return 0
    try:
        stats = json.loads(p.stdout)
    except json.JSONDecodeError:
        return 0
    entries = stats.get("entries", {}) if isinstance(stats, dict) else {}
    return sum(entries.get(kind, 0) for kind in ("op", "graph"))


def tune_with_budget(args, model, bank, out, budget_s):
    """OPAT then SGAT (model_bench.TUNED_JOBS) into `bank`, each with half of `budget_s`; returns the wall seconds of both."""
    job_args = types.SimpleNamespace(build=args.build, threads=args.threads, trials=args.trials, tune_budget=budget_s / 2,
                                     precision_mode=args.precision_mode)
    return model_bench.tune_model(job_args, model, bank, out)


def curve(args, export_models, name):
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    model_dir = export_models.export(name, os.path.join(cache, "tilebank", "models"))
    model = os.path.join(model_dir, "model.onnx")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        empty, kernels = os.path.join(work, "empty"), os.path.join(work, "kernels")
        os.makedirs(empty)
        banks = {}
        for budget in args.budgets:
            bank = os.path.join(work, f"bank_{budget:g}")
            print(f"== {name}: tuning with a {budget:g} s budget", file=sys.stderr, flush=True)
            wall = tune_with_budget(args, model, bank, os.path.join(work, f"out_{budget:g}"), budget)
            banks[budget] = bank
            rows.append({"budget_s": budget, "wall_s": wall, "entries": entries_in(args.build, bank)})
        model_bench.run_json(args.build, model_dir, empty, args.threads, 1, 1, kernels)  # warm kernel cache for every column
        columns = {"empty": model_bench.tilebank_column(args.build, model_dir, empty, args.threads, args.warmup, args.repeat, kernels)}
        for budget, bank in banks.items():
            columns[f"{budget:g}"] = model_bench.tilebank_column(args.build, model_dir, bank, args.threads, args.warmup, args.repeat, kernels)
        ms, rounds_ms, _ = alternate(columns, args.rounds)
    for row in rows:
        row["ms"] = ms[f"{row['budget_s']:g}"]
        row["speedup"] = ms["empty"] / row["ms"]
        # A bank with no entries runs the empty bank's policies: its difference is the machine's noise.
        row["gain"] = row["speedup"] - 1 if row["entries"] else 0.0
        row["rounds_ms"] = rounds_ms[f"{row['budget_s']:g}"]
    return {"model": name, "empty_ms": ms["empty"], "empty_rounds_ms": rounds_ms["empty"], "points": rows}


def spread(values):
    return (max(values) - min(values)) / 2 / (sorted(values)[len(values) // 2]) if values else 0.0


def print_curve(c):
    points = c["points"]
    longest = max(points, key=lambda p: p["budget_s"])
    gain_long = longest["gain"]
    print(f"\n{c['model']}: empty bank {c['empty_ms']:.2f} ms (spread ±{100 * spread(c['empty_rounds_ms']):.1f}%)")
    head = ("budget s", "used s", "entries", "tuned ms", "spread", "speedup", "gain share")
    fmt = "{:>11}" * len(head)
    print(fmt.format(*head))
    for p in points:
        share = "-" if gain_long <= 0 else f"{100 * p['gain'] / gain_long:.0f}%"
        print(fmt.format(f"{p['budget_s']:g}", f"{p['wall_s']:.0f}", p["entries"], f"{p['ms']:.2f}", f"±{100 * spread(p['rounds_ms']):.1f}%",
                         f"{p['speedup']:.3f}x", share))
    early = [p for p in points if p["budget_s"] <= EARLY_BUDGET_S]
    if gain_long <= 0:
        verdict = "no gain at the longest budget: nothing to reach"
    elif not early:
        verdict = f"no budget within {EARLY_BUDGET_S} s was run"
    else:
        best_early = max(p["gain"] for p in early)
        met = best_early >= EARLY_SHARE_GOAL * gain_long
        verdict = f"{100 * best_early / gain_long:.0f}% of the longest budget's gain within {EARLY_BUDGET_S} s: goal " + \
                  (f">={100 * EARLY_SHARE_GOAL:.0f}% met" if met else f">={100 * EARLY_SHARE_GOAL:.0f}% NOT met")
    print(f"  {verdict}")
    print("  gain share: the speedup's gain over the longest budget's; a bank with no entries runs the empty bank's policies (gain 0)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=["resnet18", "mobilenet_v2"])
    parser.add_argument("--budgets", default="45,180,1800", help="seconds of SGAT and OPAT together, comma-separated")
    parser.add_argument("--trials", type=int, default=200, help="candidates per operator at most (the budget and --patience end it first)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--json", help="also write the curves here")
    parser.add_argument("--precision-mode", default="force_fp32", choices=("force_fp32", "allow_fp32_to_bf16"),
                        help="OPAT's precision mode (allow_fp32_to_bf16: bf16 kernels where the CPU has them)")
    args = parser.parse_args()
    try:
        args.budgets = sorted(float(b) for b in args.budgets.split(","))
    except ValueError:
        parser.error(f"--budgets {args.budgets}: expected seconds, comma-separated")
    model_bench.ensure_binaries(args.build)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import export_models  # scripts/export_models.py (needs PyTorch)
    curves = [curve(args, export_models, name) for name in args.models]
    print(f"\ntuning_curve: {args.threads} threads, batch 1; each model's banks and its empty bank alternated in {args.rounds} rounds, "
          f"each the median of its round medians of {args.repeat} runs after {args.warmup} warm-up; --trials {args.trials}; "
          f"OPAT --precision-mode {args.precision_mode}")
    for c in curves:
        print_curve(c)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(curves, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
