#!/usr/bin/env python3
"""Writes the description-form source of data/sample_bank.jsonl and data/sample_bank_lab2.jsonl.

The times in these samples are illustrative values chosen by hand to exercise the bank tools
(merge decisions, diff ratios, validate); they are not measurements. Run:
  python3 scripts/make_sample_data.py /tmp/sample   # writes lab1.jsonl, lab2.jsonl there
  build/tilebank bank import /tmp/sample/lab1.jsonl --bank /tmp/s1 --soc x86_64-amd-zen4-avx512-2c
  build/tilebank bank export --bank /tmp/s1 --soc x86_64-amd-zen4-avx512-2c -o data/sample_bank.jsonl
"""
import json
import os
import re
import sys

SOC = "x86_64-amd-zen4-avx512-2c"


def template_versions():
    """The engine's template versions (engine/template_catalog.cpp): sample entries are current."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "template_catalog.cpp")
    with open(path) as f:
        return {name: int(version) for name, version in re.findall(r'\{"([a-z0-9_.]+)", (\d+)\}', f.read())}


TEMPLATE_VERSIONS = template_versions()


def tensor(shape, fmt="ND"):
    return {"format": fmt, "shape": shape, "type": "float"}


def op(kind, inputs, outputs, attrs=None):
    return {"op": kind, "input_desc": inputs, "output_desc": outputs, "attr": attrs or []}


def attr(name, typ, value):
    return {"name": name, "type": typ, "value": value}


def conv(n, c, h, w, k, r, stride, pad, group=1):
    oh = (h + 2 * pad - r) // stride + 1
    ow = (w + 2 * pad - r) // stride + 1
    return op("Conv", [tensor([n, c, h, w], "NCHW"), tensor([k, c // group, r, r], "NCHW")],
              [tensor([n, k, oh, ow], "NCHW")],
              [attr("strides", "list_int", [stride, stride]), attr("pads", "list_int", [pad] * 4),
               attr("group", "int", group)])


def ops():
    out = []
    # BERT-base, sequence 128
    for m, k, n in [(128, 768, 768), (128, 768, 3072), (128, 3072, 768), (128, 768, 2304)]:
        out.append(("matmul.tiled", op("MatMul", [tensor([m, k]), tensor([k, n])], [tensor([m, n])])))
    out.append(("batch_matmul.tiled", op("BatchMatMul", [tensor([12, 128, 64]), tensor([12, 64, 128])], [tensor([12, 128, 128])])))
    out.append(("batch_matmul.tiled", op("BatchMatMul", [tensor([12, 128, 128]), tensor([12, 128, 64])], [tensor([12, 128, 64])])))
    out.append(("softmax.rowwise", op("Softmax", [tensor([12, 128, 128])], [tensor([12, 128, 128])], [attr("axis", "int", -1)])))
    out.append(("layernorm.rowwise", op("LayerNormalization", [tensor([128, 768]), tensor([768]), tensor([768])], [tensor([128, 768])],
                                        [attr("epsilon", "float", 1e-12)])))
    out.append(("elementwise.generic", op("Gelu", [tensor([128, 3072])], [tensor([128, 3072])])))
    out.append(("elementwise.generic", op("Add", [tensor([128, 768]), tensor([768])], [tensor([128, 768])])))
    out.append(("gemm.tiled", op("Gemm", [tensor([1, 2048]), tensor([1000, 2048]), tensor([1000])], [tensor([1, 1000])],
                                 [attr("transB", "int", 1)])))
    # ResNet-50 convolutions
    for args in [(1, 3, 224, 224, 64, 7, 2, 3), (1, 64, 56, 56, 64, 1, 1, 0), (1, 64, 56, 56, 64, 3, 1, 1),
                 (1, 64, 56, 56, 256, 1, 1, 0), (1, 128, 28, 28, 128, 3, 1, 1), (1, 256, 14, 14, 256, 3, 1, 1),
                 (1, 512, 7, 7, 512, 3, 1, 1), (1, 1024, 14, 14, 2048, 1, 2, 0)]:
        out.append(("conv2d.direct", conv(*args)))
    # MobileNetV2 depthwise convolutions
    for c, h, s in [(32, 112, 1), (96, 112, 2), (144, 56, 1), (192, 28, 1), (384, 14, 1), (960, 7, 1)]:
        out.append(("conv2d.direct", conv(1, c, h, h, c, 3, s, 1, group=c)))
    out.append(("pool2d.generic", op("MaxPool", [tensor([1, 64, 112, 112], "NCHW")], [tensor([1, 64, 56, 56], "NCHW")],
                                     [attr("kernel_shape", "list_int", [3, 3]), attr("strides", "list_int", [2, 2]),
                                      attr("pads", "list_int", [1, 1, 1, 1])])))
    out.append(("pool2d.generic", op("GlobalAveragePool", [tensor([1, 2048, 7, 7], "NCHW")], [tensor([1, 2048, 1, 1], "NCHW")])))
    out.append(("reduce.generic", op("ReduceMean", [tensor([128, 768])], [tensor([128, 1])], [attr("axes", "list_int", [-1])])))
    out.append(("reduce.generic", op("ReduceSum", [tensor([32, 1024])], [tensor([1, 1024])], [attr("axes", "list_int", [0])])))
    out.append(("elementwise.generic", op("Relu", [tensor([1, 64, 56, 56], "NCHW")], [tensor([1, 64, 56, 56], "NCHW")])))
    return out


def graphs():
    def node(name, kind, inputs, ins, outs, attrs=None):
        n = op(kind, ins, outs, attrs)
        n["name"], n["inputs"] = name, inputs
        return n
    x = tensor([1, 64, 56, 56], "NCHW")
    conv_bn_relu = {"nodes": [
        node("conv", "Conv", ["x", "w"], [x, tensor([64, 64, 3, 3], "NCHW")], [x], [attr("pads", "list_int", [1, 1, 1, 1])]),
        node("add", "Add", ["conv", "bias"], [x, tensor([64, 1, 1])], [x]),
        node("relu", "Relu", ["add"], [x], [x])]}
    h = tensor([128, 768])
    attention_out = {"nodes": [
        node("proj", "MatMul", ["ctx", "wo"], [h, tensor([768, 768])], [h]),
        node("bias", "Add", ["proj", "bo"], [h, tensor([768])], [h]),
        node("residual", "Add", ["bias", "input"], [h, h], [h]),
        node("norm", "LayerNormalization", ["residual", "gamma", "beta"], [h, tensor([768]), tensor([768])], [h],
             [attr("epsilon", "float", 1e-12)])]}
    f = tensor([128, 3072])
    ffn = {"nodes": [
        node("up", "MatMul", ["h", "w1"], [h, tensor([768, 3072])], [f]),
        node("act", "Gelu", ["up"], [f], [f]),
        node("down", "MatMul", ["act", "w2"], [f, tensor([3072, 768])], [h])]}
    s = tensor([12, 128, 128])
    scores = {"nodes": [
        node("qk", "BatchMatMul", ["q", "k"], [tensor([12, 128, 64]), tensor([12, 64, 128])], [s]),
        node("scale", "Mul", ["qk", "inv_sqrt_d"], [s, tensor([1])], [s]),
        node("softmax", "Softmax", ["scale"], [s], [s])]}
    return [conv_bn_relu, attention_out, ffn, scores]


def grads():
    resnet = {"gradients": [{"shape": [1000, 2048], "type": "float32"}, {"shape": [2048, 512, 1, 1], "type": "float32"},
                            {"shape": [512, 512, 3, 3], "type": "float32"}, {"shape": [64, 3, 7, 7], "type": "float32"}],
              "world_size": 8}
    bert = {"gradients": [{"numel": 768 * 3072, "type": "float32"}, {"numel": 3072 * 768, "type": "float32"},
                          {"numel": 768 * 768 * 4, "type": "float32"}, {"numel": 30522 * 768, "type": "float32"}],
            "world_size": 8}
    mobilenet = {"gradients": [{"numel": 1280 * 1000, "type": "float16"}, {"numel": 320 * 1280, "type": "float16"}],
                 "world_size": 4}
    return [resnet, bert, mobilenet]


def entry(kind, description, template, mode, policy, before, after, trials, strategy, host, day):
    return {"kind": kind, "description": description, "template": {"id": template, "version": TEMPLATE_VERSIONS[template]},
            "tune_mode": mode, "policy": policy,
            "before": {"median_us": before, "spread_us": round(before * 0.02, 3), "runs": 50},
            "after": {"median_us": after, "spread_us": round(after * 0.02, 3), "runs": 50},
            "trials": trials, "strategy": strategy, "created": f"2026-11-{day:02d}T09:30:00.000Z",
            "tool_version": "0.1.0", "origin": {"host": host, "bank_id": host + "-sample"}}


def lab1():
    rows = []
    for i, (template, description) in enumerate(ops()):
        cube = description["op"] in ("MatMul", "BatchMatMul", "Gemm", "Conv")
        mode = ["Schedule", "Format", "Impl"][i % 3] if cube else "Schedule"
        policy = ({"tile_m": 32 << (i % 3), "tile_n": 64 << (i % 2), "tile_k": 128, "vector_width": 16, "unroll": 4,
                   "parallel": "outer"} if cube else {"split": 8 << (i % 3), "vector_width": 16, "parallel": "rows"})
        if mode == "Impl":
            policy["impl"] = "onednn" if i % 2 else "halide"
        if mode == "Format":
            policy["layout"] = "NCHW16c" if description["op"] == "Conv" else "packed_b"
        before = round(40.0 + 13.7 * (i + 1) * (3 if cube else 1), 3)
        after = round(before * (0.62 + 0.01 * (i % 30)), 3)
        rows.append(entry("op", description, template, mode, policy, before, after, 64 + 8 * (i % 5),
                          "GA" if cube else "RL", "lab1", 10 + i % 10))
    for i, g in enumerate(graphs()):
        rows.append(entry("graph", g, "sgat.fusion", "Schedule", {"fuse": "all" if i % 2 else "producer", "tile": 64 << i},
                          900.0 + 100 * i, 700.0 + 60 * i, 40, "GA", "lab1", 12))
    for i, g in enumerate(grads()):
        rows.append(entry("grad", g, "gdat.buckets", "Schedule", {"bucket_mb": 25 >> i, "buckets": 4 + i},
                          5000.0 + 1000 * i, 4100.0 + 900 * i, 30, "GA", "lab1", 13))
    return rows


def lab2():
    """Another machine of the same soc: some keys shared (some faster, some slower), some new."""
    rows = []
    base = lab1()
    for i, row in enumerate(base[:12]):
        row = json.loads(json.dumps(row))
        row["origin"] = {"host": "lab2", "bank_id": "lab2-sample"}
        row["after"]["median_us"] = round(row["after"]["median_us"] * (0.9 if i % 2 == 0 else 1.1), 3)
        if "tile_k" in row["policy"]:
            row["policy"]["tile_k"] = 256
        rows.append(row)
    extra = [op("MatMul", [tensor([256, 768]), tensor([768, 768])], [tensor([256, 768])]),
             op("MatMul", [tensor([512, 768]), tensor([768, 3072])], [tensor([512, 3072])]),
             op("Softmax", [tensor([12, 256, 256])], [tensor([12, 256, 256])])]
    for i, description in enumerate(extra):
        template = "softmax.rowwise" if description["op"] == "Softmax" else "matmul.tiled"
        rows.append(entry("op", description, template, "Schedule", {"tile_m": 64, "tile_n": 128, "tile_k": 256},
                          300.0 + 200 * i, 210.0 + 150 * i, 80, "GA", "lab2", 21))
    return rows


if __name__ == "__main__":
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, rows in (("lab1", lab1()), ("lab2", lab2())):
        with open(os.path.join(out_dir, name + ".jsonl"), "w") as f:
            for row in rows:
                f.write(json.dumps(row, sort_keys=True) + "\n")
