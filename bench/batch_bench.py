#!/usr/bin/python3
"""Batch tuning's speed (issue 23), its anchors side by side in one run:

1. Tasks per hour and the makespan of one batch (an operator list) run as 1, 2 and 4 shards at
   once on this machine, each worker a one-CPU node (OMP_NUM_THREADS=1) with a kernel cache of
   its own and every configuration from an empty bank: about 2x at most on 2 cores.
2. The makespan on 16 to 1024 nodes, simulated (build/batch_sim) from the tasks' estimated costs
   (the plan) and their measured times (the 1-shard run's result file, basic.batch.task_seconds),
   with cost-balanced shards against count-balanced ones. Goal: within 10% of ideal at 64 nodes.
3. The merge that ends every batch, 1M + 1M entries, against SQLite's (build/batch_merge_bench):
   goals faster than SQLite and under 1 GiB peak resident set.

    /usr/bin/python3 bench/batch_bench.py [--build build] [--ops data/ops_resnet50.json]
        [--trials 8] [--shards 1,2,4] [--merge-entries 1000000] [--work DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"batch_bench: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def run_batch(tilebank, ops, trials, shards, work):
    """Plans the batch as `shards` shards, runs every shard at once, merges; returns the figures."""
    os.makedirs(work)
    plan = os.path.join(work, "plan.json")
    root = os.path.join(work, "bank")
    run([tilebank, "batch", "plan", "-j", "2", "--singleop", ops, "--trials", str(trials), "--shards", str(shards), "-o", plan])
    env = dict(os.environ, OMP_NUM_THREADS="1", TILEBANK_KERNEL_CACHE=os.path.join(work, "kernel_cache"))
    start = time.monotonic()
    workers = [subprocess.Popen([tilebank, "tune", "--plan", plan, "--shard", str(i), "--bank", root], env=env,
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, f"shard{i}.log"), "w"))
               for i in range(shards)]
    codes = [w.wait() for w in workers]
    makespan = time.monotonic() - start
    if any(codes):
        sys.exit(f"batch_bench: a worker failed ({codes}); logs under {work}")
    run([tilebank, "batch", "merge", plan, root])
    with open(plan) as f:
        tasks = json.load(f)["tasks"]
    result_path = [p for p in os.listdir(root) if p.startswith("aoe_result_opat_batch_")]
    with open(os.path.join(root, result_path[0])) as f:
        batch = json.load(f)[0]["basic"]["batch"]
    if batch["tasks_done"] != len(tasks):
        sys.exit(f"batch_bench: {batch['tasks_done']} of {len(tasks)} tasks done")
    seconds = batch.get("task_seconds", {})
    pairs = [{"estimated_s": t["cost_s"], "measured_s": seconds[t["key"]]} for t in tasks if t["key"] in seconds]
    return {"tasks": len(tasks), "makespan": makespan, "pairs": pairs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ops", default=os.path.join(ROOT, "data", "ops_resnet50.json"))
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--shards", default="1,2,4")
    ap.add_argument("--merge-entries", type=int, default=1000000, help="0: skip the merge")
    ap.add_argument("--work", help="keep the data here (a new directory); default: a temporary one, removed")
    args = ap.parse_args()
    tilebank = os.path.join(args.build, "tilebank")
    for tool in ("tilebank", "batch_sim", "batch_merge_bench"):
        if not os.access(os.path.join(args.build, tool), os.X_OK):
            sys.exit(f"batch_bench: no {tool} in {args.build} (bash scripts/build.sh -DTILEBANK_BENCH=ON)")
    shard_counts = [int(s) for s in args.shards.split(",")]
    work = args.work or tempfile.mkdtemp(prefix="tilebank-batch-bench.")
    if args.work:
        os.makedirs(work)
    print(f"batch_bench: {os.path.relpath(args.ops, ROOT)}, {args.trials} trials a task, on {os.cpu_count()} CPUs", flush=True)

    print("\n1. one batch as 1, 2 and 4 shards at once on this machine (OMP_NUM_THREADS=1 a worker)")
    runs = {}
    for shards in shard_counts:
        runs[shards] = run_batch(tilebank, args.ops, args.trials, shards, os.path.join(work, f"shards{shards}"))
        print(f"   {shards} shard(s): done", flush=True)
    base = runs[shard_counts[0]]["makespan"]
    print(f"   {'shards':>6} {'tasks':>6} {'makespan (s)':>13} {'tasks/hour':>11} {'speedup':>8}")
    for shards, r in runs.items():
        print(f"   {shards:>6} {r['tasks']:>6} {r['makespan']:>13.1f} {r['tasks'] * 3600 / r['makespan']:>11.0f} {base / r['makespan']:>7.2f}x")

    # The tasks' times from the first configuration, where no worker shared a core.
    pairs = runs[shard_counts[0]]["pairs"]
    tasks_json = os.path.join(work, "tasks.json")
    with open(tasks_json, "w") as f:
        json.dump(pairs, f, indent=1)
    print("\n   task  estimated (s)  measured (s)")
    for i, p in enumerate(sorted(pairs, key=lambda p: -p["measured_s"])):
        print(f"   {i:>4} {p['estimated_s']:>14.1f} {p['measured_s']:>13.1f}")

    print("\n2. makespan / ideal on many nodes, simulated from the measured tasks (goal: cost-balanced <= 1.10x at 64 nodes)")
    print(run([os.path.join(args.build, "batch_sim"), tasks_json]), end="", flush=True)

    if args.merge_entries:
        print(f"\n3. the merge that ends a batch: {args.merge_entries} + {args.merge_entries} entries", flush=True)
        print(run([os.path.join(args.build, "batch_merge_bench"), "--entries", str(args.merge_entries),
                   "--dir", os.path.join(work, "merge")]), end="")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
