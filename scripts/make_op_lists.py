#!/usr/bin/env python3
"""Writes the operator lists in data/ (ATC single-op JSON) from the shapes of real models:
ResNet-50 convolutions (batch 1, 224x224), BERT-base at sequence length 128, MobileNetV2
depthwise convolutions, and the small sample list the README's main command tunes."""
import json
import os

F = "float32"


def t(shape):
    return {"shape": shape, "type": F, "format": "ND" if len(shape) != 4 else "NCHW"}


def conv(name, n, c, h, w, oc, k, s, p, g=1, bias=False):
    oh = (h + 2 * p - k) // s + 1
    ow = (w + 2 * p - k) // s + 1
    ins = [t([n, c, h, w]), t([oc, c // g, k, k])] + ([t([oc])] if bias else [])
    attr = [{"name": "kernel_shape", "type": "list_int", "value": [k, k]},
            {"name": "strides", "type": "list_int", "value": [s, s]},
            {"name": "pads", "type": "list_int", "value": [p, p, p, p]}]
    if g != 1:
        attr.append({"name": "group", "type": "int", "value": g})
    return {"op": "Conv", "name": name, "input_desc": ins, "output_desc": [t([n, oc, oh, ow])], "attr": attr}


def matmul(name, m, k, n, batch=None):
    pre = batch or []
    return {"op": "MatMul", "name": name, "input_desc": [t(pre + [m, k]), t([k, n])], "output_desc": [t(pre + [m, n])]}


def resnet50():
    ops = [conv("conv1", 1, 3, 224, 224, 64, 7, 2, 3)]
    # (stage, input channels, width, output channels, spatial size, stride of the first block)
    stages = [(2, 64, 64, 256, 56, 1), (3, 256, 128, 512, 56, 2), (4, 512, 256, 1024, 28, 2), (5, 1024, 512, 2048, 14, 2)]
    for st, cin, width, cout, size, stride in stages:
        out = size // stride
        ops.append(conv(f"res{st}a_branch2a", 1, cin, size, size, width, 1, 1, 0))
        ops.append(conv(f"res{st}a_branch2b", 1, width, size, size, width, 3, stride, 1))
        ops.append(conv(f"res{st}a_branch2c", 1, width, out, out, cout, 1, 1, 0))
        ops.append(conv(f"res{st}a_branch1", 1, cin, size, size, cout, 1, stride, 0))
        ops.append(conv(f"res{st}b_branch2a", 1, cout, out, out, width, 1, 1, 0))
        ops.append(conv(f"res{st}b_branch2b", 1, width, out, out, width, 3, 1, 1))
    ops.append({"op": "MaxPool", "name": "pool1", "input_desc": [t([1, 64, 112, 112])], "output_desc": [t([1, 64, 56, 56])],
                "attr": [{"name": "kernel_shape", "type": "list_int", "value": [3, 3]},
                         {"name": "strides", "type": "list_int", "value": [2, 2]},
                         {"name": "pads", "type": "list_int", "value": [1, 1, 1, 1]}]})
    ops.append({"op": "GlobalAveragePool", "name": "pool5", "input_desc": [t([1, 2048, 7, 7])], "output_desc": [t([1, 2048, 1, 1])]})
    ops.append({"op": "Gemm", "name": "fc1000", "input_desc": [t([1, 2048]), t([1000, 2048]), t([1000])], "output_desc": [t([1, 1000])],
                "attr": [{"name": "transB", "type": "int", "value": 1}]})
    return ops


def bert_base():
    s, h, heads = 128, 768, 12
    ops = [matmul("attention_qkv", s, h, 3 * h), matmul("attention_output", s, h, h),
           matmul("ffn_intermediate", s, h, 4 * h), matmul("ffn_output", s, 4 * h, h),
           {"op": "BatchMatMul", "name": "attention_scores", "input_desc": [t([heads, s, 64]), t([heads, 64, s])], "output_desc": [t([heads, s, s])]},
           {"op": "BatchMatMul", "name": "attention_context", "input_desc": [t([heads, s, s]), t([heads, s, 64])], "output_desc": [t([heads, s, 64])]},
           {"op": "Softmax", "name": "attention_softmax", "input_desc": [t([1, heads, s, s])], "output_desc": [t([1, heads, s, s])],
            "attr": [{"name": "axis", "type": "int", "value": -1}]},
           {"op": "LayerNormalization", "name": "attention_layernorm", "input_desc": [t([1, s, h]), t([h]), t([h])], "output_desc": [t([1, s, h])],
            "attr": [{"name": "axis", "type": "int", "value": -1}, {"name": "epsilon", "type": "float", "value": 1e-12}]},
           {"op": "Gelu", "name": "ffn_gelu", "input_desc": [t([1, s, 4 * h])], "output_desc": [t([1, s, 4 * h])]},
           {"op": "Add", "name": "ffn_bias_add", "input_desc": [t([1, s, 4 * h]), t([4 * h])], "output_desc": [t([1, s, 4 * h])]}]
    return ops


def mobilenet_v2_depthwise():
    # (channels, input size, stride) of the depthwise 3x3 convolutions
    layers = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (192, 28, 2), (384, 14, 1), (576, 14, 1), (576, 14, 2), (960, 7, 1)]
    seen, ops = set(), []
    for i, (c, size, stride) in enumerate(layers):
        if (c, size, stride) in seen:
            continue
        seen.add((c, size, stride))
        ops.append(conv(f"dw_{i}_{c}x{size}s{stride}", 1, c, size, size, c, 3, stride, 1, g=c, bias=True))
    return ops


def sample():
    return [matmul("bert_attention_output", 128, 768, 768),
            conv("resnet_res3b_branch2b", 1, 128, 28, 28, 128, 3, 1, 1),
            conv("mobilenet_dw_144", 1, 144, 56, 56, 144, 3, 2, 1, g=144, bias=True),
            {"op": "Softmax", "name": "bert_softmax", "input_desc": [t([12, 128, 128])], "output_desc": [t([12, 128, 128])]},
            {"op": "LayerNorm", "name": "bert_layernorm", "input_desc": [t([128, 768]), t([768]), t([768])], "output_desc": [t([128, 768])]},
            {"op": "Add", "name": "bias_add", "input_desc": [t([128, 3072]), t([3072])], "output_desc": [t([128, 3072])]}]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
    lists = {"ops_resnet50.json": resnet50(), "ops_bert_base.json": bert_base(),
             "ops_mobilenet_v2_dw.json": mobilenet_v2_depthwise(), "ops_sample.json": sample()}
    for name, ops in lists.items():
        with open(os.path.join(root, name), "w") as f:
            json.dump(ops, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
