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


def bench_suite():
    """The OPAT benchmark (bench/opat_bench): 14 GEMM shapes, 8 convolutions, 6 large vector ops."""
    gemm = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
            (128, 768, 768), (128, 768, 2304), (128, 768, 3072), (128, 3072, 768),      # BERT-base, M x K x N
            (3136, 64, 64), (3136, 576, 64), (784, 1152, 128), (196, 2304, 256),          # ResNet-50 convs as GEMM
            (17, 31, 33), (1, 4096, 4096), (1, 2048, 1000)]
    ops = [matmul(f"gemm_{m}x{n}x{k}", m, k, n) for m, k, n in gemm]
    ops += [conv("resnet_conv1", 1, 3, 224, 224, 64, 7, 2, 3),
            conv("resnet_res2a_branch2a", 1, 64, 56, 56, 64, 1, 1, 0),
            conv("resnet_res2b_branch2b", 1, 64, 56, 56, 64, 3, 1, 1),
            conv("resnet_res3b_branch2b", 1, 128, 28, 28, 128, 3, 1, 1),
            conv("resnet_res4b_branch2b", 1, 256, 14, 14, 256, 3, 1, 1),
            conv("resnet_res5b_branch2b", 1, 512, 7, 7, 512, 3, 1, 1),
            conv("mobilenet_dw_144", 1, 144, 56, 56, 144, 3, 1, 1, g=144, bias=True),
            conv("mobilenet_dw_96s2", 1, 96, 112, 112, 96, 3, 2, 1, g=96, bias=True)]
    big = [4096, 4096]
    ops += [{"op": "Relu", "name": "relu_16M", "input_desc": [t(big)], "output_desc": [t(big)]},
            {"op": "Add", "name": "add_16M", "input_desc": [t(big), t(big)], "output_desc": [t(big)]},
            {"op": "Gelu", "name": "gelu_16M", "input_desc": [t(big)], "output_desc": [t(big)]},
            {"op": "Softmax", "name": "softmax_8192x2048", "input_desc": [t([8192, 2048])], "output_desc": [t([8192, 2048])]},
            {"op": "LayerNorm", "name": "layernorm_16384x1024", "input_desc": [t([16384, 1024]), t([1024]), t([1024])], "output_desc": [t([16384, 1024])]},
            {"op": "ReduceSum", "name": "reducesum_4096x4096", "input_desc": [t(big)], "output_desc": [t([4096, 1])],
             "attr": [{"name": "axes", "type": "list_int", "value": [-1]}]}]
    return ops


def write(path, ops):
    with open(path, "w") as f:
        json.dump(ops, f, indent=1)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    lists = {"ops_resnet50.json": resnet50(), "ops_bert_base.json": bert_base(),
             "ops_mobilenet_v2_dw.json": mobilenet_v2_depthwise(), "ops_sample.json": sample()}
    for name, ops in lists.items():
        write(os.path.join(data, name), ops)
    write(os.path.join(here, "..", "bench", "opat_suite.json"), bench_suite())


if __name__ == "__main__":
    main()
