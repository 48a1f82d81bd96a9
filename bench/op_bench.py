#!/usr/bin/python3
"""One-node models of the ops a model runs outside its fused chains (activations and math functions,
Where under an attention mask, GridSample, reductions, Softmax and LogSoftmax), each timed by tilebank and ONNX Runtime side
by side: the node's own time per run from each side's profile, the two alternated in rounds, each
side's minimum over rounds of a median of --repeat runs.

  /usr/bin/python3 bench/op_bench.py --build build [--rounds 3] [--repeat 30] [NAME ...]

Prints per case: tilebank's node time, the implementation that ran it, ONNX Runtime's op time, and
the ratio (tilebank / ONNX Runtime). Without names, every case.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ort_anchor  # noqa: E402

SCORES = [4, 500, 500]  # a graph attention's scores: 4 heads over 500 nodes

# name: (op type, attributes, input shapes, input kinds: "normal", "positive", "bool", "grid")
UNARY = ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Round", "Sign", "Sin", "Cos", "LeakyRelu", "Elu", "Selu", "Celu",
         "ThresholdedRelu", "Shrink", "Softplus", "Softsign", "Relu", "Sigmoid", "Tanh", "HardSwish"]
CASES = {op.lower(): (op, {}, [SCORES], ["positive" if op in ("Log", "Sqrt") else "normal"]) for op in UNARY}
CASES.update({
    "where_mask": ("Where", {}, [[1, 500, 500], SCORES, []], ["bool", "normal", "normal"]),
    "gridsample_flow": ("GridSample", {"align_corners": 1}, [[256, 1, 46, 62], [256, 7, 7, 2]], ["normal", "grid"]),
    "gridsample_image": ("GridSample", {}, [[1, 64, 96, 128], [1, 96, 128, 2]], ["normal", "grid"]),
    "reducemax_rows": ("ReduceMax", {"axes": [2], "keepdims": 0}, [[1, 1024, 2048]], ["normal"]),
    "reducemean_rows": ("ReduceMean", {"axes": [1], "keepdims": 0}, [[4096, 64]], ["normal"]),
    "softmax_attention": ("Softmax", {"axis": -1}, [[12, 256, 256]], ["normal"]),
    "logsoftmax_rows": ("LogSoftmax", {"axis": -1}, [[2000, 500]], ["normal"]),
})


def output_shape(op, attrs, shapes):
    if op == "Where":
        return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    if op == "GridSample":
        return shapes[0][:2] + shapes[1][1:3]
    if op.startswith("Reduce"):
        return [d for i, d in enumerate(shapes[0]) if i not in attrs["axes"]]
    return shapes[0]


def make_case(name, root):
    op, attrs, shapes, kinds = CASES[name]
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    rng = np.random.default_rng(0)
    inputs, values = [], []
    for i, (shape, kind) in enumerate(zip(shapes, kinds)):
        if kind == "bool":
            a = rng.random(shape) > 0.5
        elif kind == "grid":
            a = rng.uniform(-1.05, 1.05, shape).astype(np.float32)
        else:
            a = rng.standard_normal(shape).astype(np.float32)
            if kind == "positive":
                a = np.abs(a) + 0.1
        values.append(a)
        elem = TensorProto.BOOL if kind == "bool" else TensorProto.FLOAT
        inputs.append(helper.make_tensor_value_info(f"x{i}", elem, shape))
    node = helper.make_node(op, [f"x{i}" for i in range(len(shapes))], ["y"], **attrs)
    graph = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape(op, attrs, shapes))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
    for i, a in enumerate(values):
        onnx.save_tensor(numpy_helper.from_array(a, f"x{i}"), os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
    return d


def tilebank_node_us(build, model, repeat):
    bank = os.path.join(os.path.dirname(model), "empty_bank")
    p = subprocess.run([os.path.join(build, "tilebank"), "run", "-m", model, "--bank", bank, "--repeat", str(repeat), "--profile", "--json"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    profile = json.loads(p.stdout)["profile"]
    nodes = profile["nodes"] if isinstance(profile, dict) else profile
    node = max(nodes, key=lambda n: n["time_us"])
    return node["time_us"], node.get("template") or node.get("source", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if not ort_anchor.available():
        print("op_bench: ONNX Runtime is not installed: run scripts/setup.sh --ort", file=sys.stderr)
        return 2
    names = args.names or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"op_bench: no case {', '.join(unknown)}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    print(f"op_bench: 2 threads, {args.rounds} rounds alternated, each side's minimum of its round medians of {args.repeat} runs")
    print(f"{'case':20s} {'shape':>16s} {'tilebank us':>11s} {'ran on':>20s} {'ORT us':>8s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as root:
        for name in names:
            d = make_case(name, root)
            model, data = os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0")
            ours, theirs, ran = [], [], ""
            for _ in range(args.rounds):
                us, ran = tilebank_node_us(args.build, model, args.repeat)
                ours.append(us)
                r = ort_anchor.run(model, data, threads=2, warmup=3, repeat=args.repeat, profile=True, keep_outputs=False)
                theirs.append(sum(r.op_ms.values()) * 1000)
            shape = "x".join(map(str, CASES[name][2][0]))
            print(f"{name:20s} {shape:>16s} {min(ours):11.1f} {ran:>20s} {min(theirs):8.1f} {min(ours) / min(theirs):6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
