#!/usr/bin/python3
"""Batch tuning on a real Slurm and under a real mpirun (issue 23).

    batch_cluster_test.py slurm BUILD_DIR   a local Slurm (scripts/cluster/local_slurm.sh): plan, an
                                            array of 4 shards tuned in node-local storage
                                            (--local-dir), one shard requeued mid-task, merge,
                                            status; the merged bank against one process's. Then a
                                            plan for two soc_versions (node0 has this host's as its
                                            feature, node1 another's) through submit_batch.sh
    batch_cluster_test.py mpi BUILD_DIR     mpirun -n 2 ... --shard mpi: rank 0 merges

Each builds a small model list (ONNX, written with onnx.helper), and checks that the merged bank
holds every task's entry, validates, and runs the models. A daemon that cannot start fails the
test with its log; nothing is skipped."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRIALS = "6"
OTHER_SOC = "x86_64-test-cpu-avx2-2c"  # a soc_version that is not this host's (node1's feature)


def mlp(path, batch, widths, seed):
    """x[batch, widths[0]] through MatMul+Add+Relu layers of the given widths."""
    rng = np.random.default_rng(seed)
    nodes, inits, name = [], [], "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        inits += [numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32) * 0.1, f"w{i}"),
                  numpy_helper.from_array(rng.standard_normal(n).astype(np.float32) * 0.1, f"b{i}")]
        nodes += [helper.make_node("MatMul", [name, f"w{i}"], [f"m{i}"]), helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
        name = f"r{i}"
    graph = helper.make_graph(nodes, os.path.basename(os.path.dirname(path)),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, widths[0]])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [batch, widths[-1]])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


def model_list(work):
    """Three models, one of them twice the same layers as another (its tasks are not tuned twice)."""
    mlp(os.path.join(work, "models", "a", "model.onnx"), 16, [64, 96, 128, 80, 48], 1)
    mlp(os.path.join(work, "models", "b", "model.onnx"), 8, [48, 112, 72, 56], 2)
    mlp(os.path.join(work, "models", "c", "model.onnx"), 16, [64, 96, 128], 3)
    path = os.path.join(work, "models.txt")
    with open(path, "w") as f:
        f.write("# the batch's models\nmodels/a/model.onnx\nmodels/b/model.onnx\nmodels/c/model.onnx\n")
    return path


def run(cmd, env=None, check=True, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def status(tilebank, plan, root):
    return json.loads(run([tilebank, "batch", "status", plan, root, "--json"]).stdout)


def exported_keys(tilebank, root, soc, out):
    run([tilebank, "bank", "export", "--bank", root, "--soc", soc, "-o", out])
    with open(out) as f:
        return {json.loads(line)["key"] for line in list(f)[1:] if line.strip()}


def soc_version(tilebank, work):
    """This host's soc_version, as a bank of it names its directory."""
    probe = os.path.join(work, "probe")
    with open(os.path.join(work, "probe.json"), "w") as f:
        json.dump([{"op": "Relu", "input_desc": [{"shape": [4], "type": "float32"}], "output_desc": [{"shape": [4], "type": "float32"}]}], f)
    run([tilebank, "tune", "-j", "2", "--singleop", os.path.join(work, "probe.json"), "--trials", "1", "--bank", probe, "--output", work])
    return os.listdir(probe)[0]


def check_batch(tilebank, plan_path, root, soc, work, label):
    """The merged bank of a finished batch: every task's entry, valid, the result file, the status."""
    plan = json.load(open(plan_path))
    keys = {t["key"] for t in plan["tasks"]}
    got = exported_keys(tilebank, root, soc, os.path.join(work, label + ".jsonl"))
    if got != keys:
        sys.exit(f"FAIL ({label}): the merged bank's keys differ from the plan's tasks: missing {sorted(keys - got)}, extra {sorted(got - keys)}")
    run([tilebank, "bank", "validate", "--bank", root, "--soc", soc])
    st = status(tilebank, plan_path, root)
    if st["total"]["left"] != 0 or st["total"]["states"] != {"done": plan["shards"]}:
        sys.exit(f"FAIL ({label}): status after the batch: {json.dumps(st['total'])}")
    result = json.load(open(os.path.join(root, f"aoe_result_opat_batch_{plan['plan_id']}.json")))
    summary = result[1]["OPAT"]["repo_summary"]
    if summary["total_num"] != len(keys) or result[1]["OPAT"]["opat_tuning_result"] != "tuning successful":
        sys.exit(f"FAIL ({label}): the batch's result file: {json.dumps(result[1]['OPAT'])[:400]}")
    # Every operator the plan listed is a task, so each finds its own entry (winner or built-in). With
    # the templates' defaults as the fallback no built-in fusion stands in for a bank's anchor, so the
    # anchors run the bank's policies (or oneDNN in their place, "converts", timed at load); the
    # epilogues the plan saw fused into them have no entries of their own.
    env = dict(os.environ, TILEBANK_DEFAULT_POLICIES="template")
    for m in ("a", "b", "c"):
        out = run([tilebank, "run", "-m", os.path.join(work, "models", m, "model.onnx"), "--bank", root, "--repeat", "3", "--json"], env=env)
        policies = json.loads(out.stdout)["policies"]
        if policies["nearest"] != 0 or policies["bank"] + policies["converts"] == 0:
            sys.exit(f"FAIL ({label}): model {m} ran operators without their entries in the merged bank: {policies}")
    return keys


def slurm_test(tilebank, work):
    cluster = os.path.join(work, "slurm")
    script = os.path.join(ROOT, "scripts", "cluster", "local_slurm.sh")
    soc = soc_version(tilebank, work)
    features = dict(os.environ, FEATURES=f"tilebank,{soc}", NODE1_FEATURES=f"tilebank,{OTHER_SOC}")
    started = run(["bash", script, "start", cluster], env=features, check=False, timeout=120)
    try:
        if started.returncode != 0:
            sys.exit(f"FAIL: the local Slurm did not start:\n{started.stdout}\n{started.stderr}")
        env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "etc", "slurm.conf"), TILEBANK=tilebank)
        models = model_list(work)
        plan, root = os.path.join(work, "plan.json"), os.path.join(work, "bank_root")
        run([tilebank, "batch", "plan", "-j", "2", "--model-list", models, "--shards", "4", "--trials", TRIALS, "-o", plan])
        tasks = json.load(open(plan))["shard_tasks"]
        target = max(range(4), key=lambda s: len(tasks[s]))
        if len(tasks[target]) < 2:
            sys.exit(f"FAIL: no shard has 2 tasks to kill one between ({tasks})")
        # The workers tune in "node-local" storage and publish each shard to the bank root after each task.
        local = os.path.join(work, "node_local")
        array = run(["sbatch", "--parsable", "--array=0-3", "--chdir", work, "--output", os.path.join(work, "shard-%a.out"),
                     os.path.join(ROOT, "scripts", "cluster", "tune_array.sbatch"), plan, root],
                    env=dict(env, TILEBANK_LOCAL_DIR=local)).stdout.strip().split(";")[0]
        merge = run(["sbatch", "--parsable", f"--dependency=afterany:{array}", "--chdir", work, "--output", os.path.join(work, "merge.out"),
                     os.path.join(ROOT, "scripts", "cluster", "merge.sbatch"), plan, root], env=env).stdout.strip().split(";")[0]
        # Kill the target shard between its tasks: Slurm requeues it, and it goes on where it stopped.
        deadline = time.time() + 300
        while True:
            row = status(tilebank, plan, root)["shards"][target]
            if row["state"] == "running" and row["done"] >= 1 and row["left"] >= 1:
                run(["scontrol", "requeue", f"{array}_{target}"], env=env)
                break
            if row["state"] == "done":
                sys.exit(f"FAIL: shard {target} finished before it could be killed mid-batch (its tasks are too short): {row}")
            if time.time() > deadline:
                sys.exit(f"FAIL: shard {target} did not start within 300 s: {row}\n" + run(["squeue"], env=env).stdout)
            time.sleep(0.2)
        killed = status(tilebank, plan, root)["shards"][target]
        print(f"requeued shard {target} after {killed['done']} of {killed['tasks']} tasks: {killed['state']}")
        while run(["squeue", "-h", "-j", f"{array},{merge}"], env=env, check=False).stdout.strip():
            if time.time() > deadline + 300:
                sys.exit("FAIL: the batch did not end within 10 minutes:\n" + run(["squeue"], env=env).stdout)
            time.sleep(1)
        log = open(os.path.join(work, f"shard-{target}.out")).read()
        if "restart 1" not in log or "resumed from its checkpoint" not in log:
            sys.exit(f"FAIL: shard {target} was not restarted from its checkpoint:\n{log}")
        plan_id = json.load(open(plan))["plan_id"]
        if not os.path.isdir(os.path.join(local, plan_id, "shards")):
            sys.exit(f"FAIL: the workers did not tune in node-local storage ({local})")
        if os.listdir(os.path.join(local, plan_id, "shards")):
            sys.exit(f"FAIL: node-local shard banks were left behind: {os.listdir(os.path.join(local, plan_id, 'shards'))}")
        merge_log = open(os.path.join(work, "merge.out")).read()
        if "merged 4 shard banks" not in merge_log:
            sys.exit(f"FAIL: the merge job:\n{merge_log}")
        keys = check_batch(tilebank, plan, root, soc, work, "slurm")
        # One process from the same inputs (the whole batch, then the merge) gets the same keys.
        single = os.path.join(work, "single")
        run([tilebank, "tune", "-j", "2", "--model-list", models, "--trials", TRIALS, "--bank", single])
        single_keys = exported_keys(tilebank, single, soc, os.path.join(work, "single.jsonl"))
        if single_keys != keys:
            sys.exit(f"FAIL: one process's bank differs from the merged one: {sorted(single_keys ^ keys)}")
        print(f"slurm: {len(keys)} tasks in 4 shards, shard {target} requeued mid-batch and resumed; merged bank = one process's keys")
        two_soc_versions(tilebank, work, env, soc)
    finally:
        run(["bash", script, "stop", cluster], check=False, timeout=120)


def two_soc_versions(tilebank, work, env, soc):
    """A plan for this host's soc_version and another, submitted with submit_batch.sh: each group's
    array runs on the node with its soc_version as feature (node0 this host's, node1 the other's,
    where the worker refuses it, as on a misconfigured node), then one merge of every group."""
    with open(os.path.join(work, "two.txt"), "w") as f:
        f.write("models/c/model.onnx\n")
    plan, root, logs = os.path.join(work, "two_plan.json"), os.path.join(work, "two_root"), os.path.join(work, "two_logs")
    os.makedirs(logs)
    run([tilebank, "batch", "plan", "-j", "2", "--model-list", os.path.join(work, "two.txt"), "--shards", "2", "--soc", f"{soc},{OTHER_SOC}",
         "--trials", TRIALS, "-o", plan])
    out = run(["bash", os.path.join(ROOT, "scripts", "cluster", "submit_batch.sh"), plan, root, "--", "--chdir", logs], env=env).stdout
    jobs = [line.split(" job ")[1].split()[0] for line in out.splitlines() if " job " in line]
    if len(jobs) != 3 or f"soc_version {soc}: shards 0-1" not in out or f"soc_version {OTHER_SOC}: shards 2-3" not in out:
        sys.exit(f"FAIL: submit_batch.sh did not submit an array per soc_version and the merge:\n{out}")
    deadline = time.time() + 300
    while run(["squeue", "-h", "-j", ",".join(jobs)], env=env, check=False).stdout.strip():
        if time.time() > deadline:
            sys.exit("FAIL: the two-soc_version batch did not end within 5 minutes:\n" + run(["squeue"], env=env).stdout)
        time.sleep(1)
    for array, node, shards in ((jobs[0], "node0", (0, 1)), (jobs[1], "node1", (2, 3))):
        for index, shard in enumerate(shards):  # each array counts from 0; its shards from the group's first
            log = open(os.path.join(logs, f"slurm-{array}_{index}.out")).read()
            if f"tilebank shard {shard} on" not in log or f"(node {node})" not in log:
                sys.exit(f"FAIL: shard {shard} did not run on {node}, the node of its soc_version:\n{log}")
    st = status(tilebank, plan, root)
    mine, other = st["by_soc_version"][soc], st["by_soc_version"][OTHER_SOC]
    if mine["states"] != {"done": 2} or mine["left"] != 0 or other["states"] != {"failed": 2}:
        sys.exit(f"FAIL: status of the two groups: {json.dumps(st['by_soc_version'])}")
    if "this machine is " + soc not in st["shards"][2]["message"]:
        sys.exit(f"FAIL: the other soc_version's shard does not say why it failed: {st['shards'][2]}")
    merge_log = open(os.path.join(logs, f"slurm-{jobs[2]}.out")).read()
    if f"merged 2 shard banks into {root}/{soc}" not in merge_log or "unfinished shards: 2, 3" not in merge_log:
        sys.exit(f"FAIL: the merge job of the two groups:\n{merge_log}")
    keys = {t["key"] for t in json.load(open(plan))["tasks"]}
    got = exported_keys(tilebank, root, soc, os.path.join(work, "two.jsonl"))
    if got != keys:
        sys.exit(f"FAIL: the merged bank of {soc} differs from the plan's tasks: {sorted(got ^ keys)}")
    print(f"slurm, two soc_versions: each group's array ran on its own node; {soc}'s {len(keys)} tasks merged, {OTHER_SOC}'s refused by its node")


def mpi_test(tilebank, work):
    if not shutil.which("mpirun"):
        sys.exit("FAIL: mpirun is missing: scripts/setup.sh --cluster installs openmpi-bin")
    soc = soc_version(tilebank, work)
    models = model_list(work)
    root = os.path.join(work, "mpi_root")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    p = run(["mpirun", "-n", "2", tilebank, "tune", "-j", "2", "--model-list", models, "--trials", TRIALS, "--shard", "mpi", "--bank", root], env=env)
    if "merged 2 shard banks" not in p.stdout:
        sys.exit(f"FAIL: rank 0 did not merge:\n{p.stdout}\n{p.stderr}")
    plan = os.path.join(work, "plan.json")
    run([tilebank, "batch", "plan", "-j", "2", "--model-list", models, "--shards", "2", "--trials", TRIALS, "-o", plan])
    keys = check_batch(tilebank, plan, root, soc, work, "mpi")
    print(f"mpi: {len(keys)} tasks in 2 ranks, merged by rank 0")
    # Gradient fusion problems (job type 4) the same way: two profiles, one a rank.
    profile = json.load(open(os.path.join(ROOT, "data", "gradient_profile_resnet18.json")))
    for name, world in (("r18_w2.json", 2), ("r18_w8.json", 8)):
        json.dump(dict(profile, world_size=world, model=name[:-5]), open(os.path.join(work, name), "w"))
    with open(os.path.join(work, "gradients.txt"), "w") as f:
        f.write("r18_w2.json\nr18_w8.json\n")
    groot = os.path.join(work, "gdat_root")
    p = run(["mpirun", "-n", "2", tilebank, "tune", "-j", "4", "--gradients-list", os.path.join(work, "gradients.txt"), "--shard", "mpi",
             "--bank", groot], env=env)
    if "merged 2 shard banks" not in p.stdout or "2 of 2 done, 0 failed" not in p.stdout:
        sys.exit(f"FAIL: rank 0 did not merge the gradient problems:\n{p.stdout}\n{p.stderr}")
    if len(exported_keys(tilebank, groot, soc, os.path.join(work, "gdat.jsonl"))) != 2:
        sys.exit("FAIL: the merged bank lacks a gradient problem's entry")
    print("mpi: 2 gradient fusion problems in 2 ranks, merged by rank 0")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("slurm", "mpi"):
        sys.exit(__doc__)
    tilebank = os.path.join(os.path.abspath(sys.argv[2]), "tilebank")
    with tempfile.TemporaryDirectory(prefix="tb-batch-") as work:
        os.chmod(work, 0o755)  # munged and slurmd reach into it
        (slurm_test if sys.argv[1] == "slurm" else mpi_test)(tilebank, work)


if __name__ == "__main__":
    main()
