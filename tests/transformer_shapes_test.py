#!/usr/bin/python3
"""CTest models.transformer_shapes: torch.nn transformers exported with dynamic batch and sequence
axes (scripts/export_models.py, the small encoder and decoder) run at shapes other than the
exported one and match PyTorch there; they tune with `tune -j 1` (SGAT) then `tune -j 2` (OPAT)
and run matching PyTorch from the bank; the bank's keys follow the shapes (at the tuned shape they
are hits; at another batch and sequence length the operators come from the nearest shape's
entries, not from hits). Entries the test stores itself make the key checks independent of what
tuning found on the machine.

  usage: tests/transformer_shapes_test.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

import torch  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import export_models  # noqa: E402

failures = []


def check(condition, what):
    print(("ok      " if condition else "FAILED  ") + what, flush=True)
    if not condition:
        failures.append(what)


def write_data(directory, names, inputs, output):
    os.makedirs(directory, exist_ok=True)
    for i, (name, x) in enumerate(zip(names, inputs)):
        with open(os.path.join(directory, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x.numpy(), name).SerializeToString())
    with open(os.path.join(directory, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(output.numpy(), "output").SerializeToString())


def shape_flag(names, inputs):
    return ";".join(f"{n}:{','.join(str(d) for d in x.shape)}" for n, x in zip(names, inputs))


def policy_of(text):
    """A bound node's policy text ("impl=default,layout=auto") as the entry's policy object."""
    policy = {}
    for item in filter(None, text.split(",")):
        name, value = item.split("=", 1)
        policy[name] = int(value) if value.lstrip("-").isdigit() else value
    return policy


def onednn_entries(probe, ops, soc):
    """Bank entries (export lines) running oneDNN for the listed operators that `probe` (a `run
    --profile --json` under TILEBANK_DEFAULT_POLICIES=onednn) ran in oneDNN: the test's own entries,
    whatever tuning stored on this machine."""
    by_node = {n["name"]: n for n in probe.get("profile", [])}
    lines = [json.dumps({"soc_version": soc, "tilebank_export": 1})]
    for op in ops:
        node = by_node.get(op.get("name"))
        if not node or node.get("template") != "impl.onednn":
            continue
        description = {k: op[k] for k in ("op", "input_desc", "output_desc", "attr") if k in op}
        us = max(node["time_us"], 1.0)
        measured = {"median_us": us, "spread_us": 0.0, "runs": 1}
        lines.append(json.dumps({"kind": "op", "description": description, "op_type": node["op_type"],
                                 "template": {"id": "impl.onednn", "version": node["template_version"]}, "tune_mode": "Impl",
                                 "policy": policy_of(node["policy"]), "before": measured, "after": measured, "trials": 0,
                                 "strategy": "test", "created": "2026-11-25T00:00:00.000Z", "tool_version": "test",
                                 "revision": 1, "origin": {"host": "test", "bank_id": "test"}}))
    return lines


def main():
    build = sys.argv[1]
    tilebank = os.path.join(build, "tilebank")
    # The templates' defaults throughout but for the first run: a weak baseline, so that tuning stores
    # entries whatever the machine (the key checks below need some), and a key whose default won runs it.
    env = dict(os.environ, TILEBANK_KERNEL_CACHE="off", TILEBANK_DEFAULT_POLICIES="template")

    def cli(*args, defaults="template"):
        p = subprocess.run([tilebank] + list(args), capture_output=True, text=True, env=dict(env, TILEBANK_DEFAULT_POLICIES=defaults))
        if p.returncode not in (0, 1):
            print(p.stdout + p.stderr)
        return p

    def run(model, data, names, inputs, bank, defaults="template", extra=()):
        p = cli("run", "-m", model, "--data", data, "--input-shape", shape_flag(names, inputs), "--bank", bank, "--repeat", "1", "--json",
                *extra, defaults=defaults)
        return json.loads(p.stdout) if p.returncode == 0 else {"error": p.stderr}

    generator = torch.Generator().manual_seed(3)
    with tempfile.TemporaryDirectory() as work:
        for name in ("small_transformer_encoder", "small_transformer_decoder"):
            model_dir = export_models.export(name, work)
            model_path = os.path.join(model_dir, "model.onnx")
            model, exported, names, axes = export_models.build(name)
            check(axes is not None, f"{name}: exported with dynamic axes")
            width = exported[0].shape[-1]
            # Another batch and sequence length than the exported (1, 32) / (1, 24) and (1, 32).
            if name.endswith("encoder"):
                mask = torch.zeros(2, 20)
                mask[:, 16:] = float("-inf")
                other = (torch.randn(2, 20, width, generator=generator), mask)
            else:
                other = (torch.randn(2, 11, width, generator=generator), torch.randn(2, 17, width, generator=generator))
            with torch.no_grad():
                expected = model(*other)
            other_data = os.path.join(work, name + "_other")
            write_data(other_data, names, other, expected)
            exported_data = os.path.join(model_dir, "test_data_set_0")
            empty, bank = os.path.join(work, name + "_empty"), os.path.join(work, name + "_bank")

            r = run(model_path, other_data, names, other, empty, defaults="builtin")
            check(r.get("check", {}).get("ok") is True, f"{name}: runs at {shape_flag(names, other)} and matches PyTorch ({r.get('error', '')})")

            # SGAT then OPAT at the exported shape, into one bank.
            shape = shape_flag(names, exported)
            for job in ("1", "2"):
                p = cli("tune", "-j", job, "-m", model_path, "--input-shape", shape, "--bank", bank, "--trials", "4",
                        "--output", os.path.join(work, f"{name}_out{job}"))
                check(p.returncode == 0, f"{name}: tune -j {job} --input-shape {shape} ({p.stderr.strip()[-300:]})")
            # What follows (a key's own entry at its shape, the nearest shape's entry elsewhere) must not
            # rest on what tuning found on this machine: the test stores oneDNN entries of its own for the
            # model's operators at this shape (tuning's faster entries are kept over them).
            dump = os.path.join(work, name + "_dump")
            probe = run(model_path, exported_data, names, exported, empty, defaults="onednn", extra=("--profile", "--dump", dump))
            ops = json.load(open(os.path.join(dump, "aoe_dump", name + "_ops.json"))) if "error" not in probe else []
            lines = onednn_entries(probe, ops, probe.get("soc_version", ""))
            check(len(lines) > 1, f"{name}: the model has operators oneDNN runs, to store entries for ({probe.get('error', '')})")
            entries_file = os.path.join(work, name + "_entries.jsonl")
            with open(entries_file, "w") as f:
                f.write("\n".join(lines) + "\n")
            p = cli("bank", "import", entries_file, "--bank", bank)
            check(p.returncode == 0, f"{name}: the test's entries import ({p.stderr.strip()[-300:]})")
            tuned = run(model_path, exported_data, names, exported, bank)
            check(tuned.get("check", {}).get("ok") is True, f"{name}: runs tuned at {shape} and matches PyTorch")
            policies = tuned.get("policies", {})
            check(policies.get("bank", 0) >= 1, f"{name}: at the tuned shape the bank's keys are hits ({policies})")

            # At the other shape the bank has no key of these operators: the nearest shape's entries.
            r = run(model_path, other_data, names, other, bank)
            check(r.get("check", {}).get("ok") is True, f"{name}: runs at the other shape with the bank and matches PyTorch")
            other_policies = r.get("policies", {})
            check(other_policies.get("bank", -1) == 0 and other_policies.get("nearest", 0) >= 1,
                  f"{name}: at the other shape no key is the tuned one and the nearest entries run ({other_policies})")
    print(f"transformer_shapes: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
