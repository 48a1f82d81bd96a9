#!/usr/bin/python3
"""Runs the model zoo through tilebank and writes docs/MODELS.md: every classifier of torchvision 0.14
(80), its 6 segmentation models, and transformers built from torch.nn (an encoder with a key padding
mask, a decoder with a causal mask), each exported by scripts/export_models.py, run with
`tilebank run --data` on an empty bank (the built-in choices) and compared with PyTorch's output.

  usage: /usr/bin/python3 scripts/model_zoo.py [--build DIR] [--threads N] [--repeat N] [--results FILE]
                                               [--markdown FILE] [--no-torchscript] [NAME ...]

Names default to the whole zoo. Each model's outcome is stored in --results (JSON, default
<models dir>/zoo_results.json) as soon as it is known, so a run that stops goes on where it stopped
when given the same file; names given again are run again. docs/MODELS.md is written from every
stored result. With TorchScript (the default) each model's TorchScript time (traced, frozen,
optimize_for_inference) is measured beside tilebank's, same threads, median of --repeat runs.
Exit status: 0 when every model run matched, 1 otherwise.
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
sys.path.insert(0, HERE)


def zoo():
    import export_models
    import user_models
    return export_models.TRANSFORMERS + export_models.classifiers() + export_models.SEGMENTATION + list(user_models.BUILDERS)


def node_count(model_path):
    import onnx
    model = onnx.load(model_path, load_external_data=False)
    return sum(1 for n in model.graph.node if n.op_type != "Constant")


def torchscript_ms(name, threads, repeat):
    """TorchScript's median in a child process of its own: PyTorch does not give back the memory of
    the models it traced, and one process measuring the whole zoo grew past 23 GB."""
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--torchscript-only", name, "--threads", str(threads),
                        "--repeat", str(repeat)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"TorchScript on {name}: " + (p.stderr.strip().splitlines() or ["?"])[-1])
    return float(p.stdout.strip().splitlines()[-1])


def measure_torchscript(name, threads, repeat):
    import torch
    import export_models
    torch.set_num_threads(threads)
    model, inputs, _, _ = export_models.build(name)
    with torch.no_grad():
        scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, inputs).eval()))
        for _ in range(2):
            scripted(*inputs)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            scripted(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def export(names, models_dir):
    """Exports `names` in one child process (a model that fails to export fails the rest); returns
    (model directories in order, or None, and the error's last line)."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "export_models.py"), "--dir", models_dir] + names, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["?"])[-1]
    return p.stdout.strip().splitlines()[-len(names):], ""


def run_one(name, args, models_dir, model_dir=None):
    """The zoo's row for one model: export (unless `model_dir` holds it), tilebank run --data, TorchScript."""
    row = {"model": name}
    import export_models
    row["family"] = export_models.family(name)
    if model_dir is None:
        dirs, error = export([name], models_dir)
        if dirs is None:
            row["outcome"] = "export failed: " + error
            return row
        model_dir = dirs[0]
    model_path = os.path.join(model_dir, "model.onnx")
    data = os.path.join(model_dir, "test_data_set_0")
    row["nodes"] = node_count(model_path)
    with tempfile.TemporaryDirectory() as empty_bank:
        cmd = [os.path.join(args.build, "tilebank"), "run", "-m", model_path, "--data", data,
               "--bank", empty_bank, "--threads", str(args.threads), "--warmup", "1", "--repeat", str(args.repeat), "--json"]
        start = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        row["wall_s"] = time.monotonic() - start
    row["exit"] = p.returncode
    if p.returncode == 2 or not p.stdout.strip():
        message = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        row["outcome"] = "refused: " + message.removeprefix("tilebank: error: ").replace(model_path + ": ", "").replace(model_path, "the model")
        return row
    result = json.loads(p.stdout)
    row["gflop"] = result["gflop"]
    row["soc_version"] = result["soc_version"]
    row["ms"] = result["latency_ms"]["median"]
    row["load_s"] = result["load_s"]
    check = result.get("check", {})
    row["max_abs_error"] = check.get("max_abs_error")
    row["outcome"] = "matches" if check.get("ok") else "differs: " + check.get("worst", "?")
    if args.torchscript:
        try:
            row["torchscript_ms"] = torchscript_ms(name, args.threads, args.repeat)
        except RuntimeError as e:  # the row stands without the reference
            print(f"model_zoo: {e}", file=sys.stderr)
    return row


# docs/MODELS.md's closing section: ONNX's own test models and why each still refused one is
# (kept by hand from tests/onnx_model_test.cpp's output; the zoo run does not measure it).
ONNX_TEST_MODELS = """## ONNX's own test models

Of libonnx-testdata's 1072 models with test data (node, pytorch-converted, pytorch-operator,
simple), **1003 run and match** through `tilebank run -m model.onnx --data test_data_set_0`, **none
differ, none crash** (tests/onnx_model_test.cpp holds the floors; engine/kernels/kernel_conformance_test.cpp
runs the 782 single-node tests of the registry's ops in process). The 69 refused, each with why:

| cases | why |
|---|---|
| test_if, test_if_opt, test_if_seq, test_loop11, test_loop13_seq, test_loop16_seq_none, test_scan_sum, test_scan9_sum, test_range_float_type_positive_delta_expanded, test_range_int32_type_negative_delta_expanded | If, Loop and Scan (subgraphs) have no kernel yet |
| test_identity_opt, test_identity_sequence, test_optional_get_element, test_optional_get_element_sequence, test_optional_has_element, test_optional_has_element_empty, test_sequence_insert_at_back, test_sequence_insert_at_front, 12 test_sequence_map_*, simple/test_sequence_model1..8 | sequence and optional values (inputs, outputs and the Sequence*/Optional* ops) are not in the executor yet |
| test_bernoulli, test_bernoulli_double, test_bernoulli_seed (and their _expanded), test_training_dropout, test_training_dropout_default, test_training_dropout_mask, test_training_dropout_default_mask | the outputs are random draws: the kernels run, but no runtime reproduces numpy's stream, so `--data` refuses to compare (exit 2) instead of reporting a mismatch |
| test_adagrad, test_adagrad_multiple, test_adam, test_adam_multiple, test_momentum, test_momentum_multiple, test_nesterov_momentum, simple/test_gradient_of_add, simple/test_gradient_of_add_and_mul | ops of the ai.onnx.preview.training domain (training, not inference); the executor runs the default ONNX domain |
| test_castlike_BFLOAT16_to_FLOAT, test_castlike_FLOAT_to_BFLOAT16 (and _expanded) | the test data's `like` input has shape [1], the model declares [3,4]: refused as a wrong input shape |
| test_layer_normalization_2d_axis0_expanded, test_layer_normalization_3d_axis0_epsilon_expanded, test_layer_normalization_4d_axis0_expanded | libonnx 1.12's shape inference fails on the expanded function's Concat of an empty shape, strict and not |
| pytorch-converted/test_Softmin, test_Softsign, pytorch-operator/test_operator_addconstant, test_operator_addmm, test_operator_mm | opset 6 models that libonnx 1.12's version converter cannot bring to opset 17 (an assertion inside the converter) |
"""


def markdown(results, args, soc, everything):
    import export_models
    missing = [{"model": n, "family": export_models.family(n), "outcome": "not run yet"} for n in everything if n not in results]
    rows = sorted(list(results.values()) + missing, key=lambda r: (r.get("family", ""), r["model"]))
    matched = sum(1 for r in rows if r["outcome"] == "matches")
    refused = sum(1 for r in rows if r["outcome"].startswith("refused"))
    lines = [
        "# The model zoo",
        "",
        "Every model a user is likely to bring first, run by `tilebank run --data` with an empty bank (each",
        "op class's built-in choice, engine/catalog/builtin_choice.h), its output compared with PyTorch's for",
        "the same seeded input. Written by",
        "`scripts/model_zoo.py`; reproduce with",
        "",
        "```",
        "bash scripts/setup.sh --models && BUILD_DIR=build bash scripts/build.sh",
        f"/usr/bin/python3 scripts/model_zoo.py --threads {args.threads} --repeat {args.repeat}",
        "```",
        "",
        f"Measured on {soc}, {args.threads} threads, batch 1; latency is the median of {args.repeat} runs after one warm-up"
        + (", TorchScript's (traced, frozen, optimize_for_inference) likewise, beside it in the same run." if args.torchscript else
           " (TorchScript was not measured in this run)."),
        "Inputs are [1,3,224,224] (inception_v3: 299); the transformers' are listed in scripts/export_models.py.",
        "",
        f"**{matched} of {len(rows)} run and match; {refused} are refused; {len(missing)} were not run in this table's run.**",
        "",
        "| model | family | nodes | GFLOP | default ms | TorchScript ms | ratio | outcome |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ms, ts = r.get("ms"), r.get("torchscript_ms")
        ratio = f"{ms / ts:.2f}x" if ms and ts else "-"
        lines.append(f"| {r['model']} | {r.get('family', '-')} | {r.get('nodes', '-')} | "
                     f"{r['gflop']:.2f} | " if "gflop" in r else f"| {r['model']} | {r.get('family', '-')} | {r.get('nodes', '-')} | - | ")
        lines[-1] += (f"{ms:.1f} | " if ms else "- | ") + (f"{ts:.1f} | " if ts else "- | ") + f"{ratio} | {r['outcome'].replace('|', '/')} |"
    lines += ["", "ratio: tilebank's default latency over TorchScript's (below 1: tilebank is faster).", "", ONNX_TEST_MODELS]
    return "\n".join(lines)


def check_small(args):
    import export_models
    import user_models
    names = args.names or list(export_models.small_models()) + ["small_" + n for n in user_models.SMALL]
    failed = []
    with tempfile.TemporaryDirectory() as models_dir:
        dirs, error = export(names, models_dir)
        if dirs is None:
            print(f"model_zoo: export failed: {error}", file=sys.stderr)
            return 1
        for name, model_dir in zip(names, dirs):
            args.torchscript = False
            row = run_one(name, args, models_dir, model_dir)
            print(f"{name:28} {row['family']:20} {row.get('nodes', '-'):>5} nodes  {row['outcome']}", flush=True)
            if row["outcome"] != "matches":
                failed.append(name)
    print(f"model_zoo --small: {len(names) - len(failed)} of {len(names)} match" + (f"; not: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=10)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parser.add_argument("--models-dir", default=os.path.join(cache, "tilebank", "models"))
    parser.add_argument("--results")
    parser.add_argument("--markdown", default=os.path.join(HERE, "..", "docs", "MODELS.md"))
    parser.add_argument("--no-torchscript", dest="torchscript", action="store_false")
    parser.add_argument("--markdown-only", action="store_true", help="write --markdown from the stored results, run nothing")
    parser.add_argument("--torchscript-only", metavar="NAME", help=argparse.SUPPRESS)  # torchscript_ms's child
    parser.add_argument("--small", action="store_true",
                        help="the test suite's run: one small model of each family (export_models.small_models), exported into a "
                             "temporary folder, checked, nothing written; exit 0 when all match")
    args = parser.parse_args()
    if args.small:
        return check_small(args)
    if args.torchscript_only:
        print(measure_torchscript(args.torchscript_only, args.threads, args.repeat))
        return 0
    everything = zoo()
    for name in args.names:
        if name not in everything:
            print(f"model_zoo.py: '{name}' is not in the zoo", file=sys.stderr)
            return 2
    if not os.access(os.path.join(args.build, "tilebank"), os.X_OK):
        print(f"model_zoo.py: no tilebank in {args.build}; build it with: BUILD_DIR={args.build} bash scripts/build.sh", file=sys.stderr)
        return 2
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    results_path = args.results or os.path.join(args.models_dir, "zoo_results.json")
    results = {}
    if os.path.exists(results_path):
        with open(results_path) as f:
            results = json.load(f)
    names = [] if args.markdown_only else args.names or [n for n in everything if n not in results]
    for name in names:
        print(f"== {name}", file=sys.stderr, flush=True)
        results[name] = run_one(name, args, args.models_dir)
        print(json.dumps(results[name]), file=sys.stderr, flush=True)
        tmp = results_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1)
        os.replace(tmp, results_path)
    soc = next((r["soc_version"] for r in results.values() if r.get("soc_version")), "this machine")
    with open(args.markdown, "w") as f:
        f.write(markdown({k: v for k, v in results.items() if k in everything}, args, soc, everything))
    failed = [n for n in everything if n in results and results[n]["outcome"] != "matches"]
    print(f"model_zoo: {len(results)} models, {len(failed)} not matching: {' '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
