#!/usr/bin/python3
"""Exports the models tilebank's model tests, demo and benchmark run, with PyTorch 1.13 at opset 17
(Debian's python3-torch, python3-torchvision, python3-onnx; run with /usr/bin/python3):

  resnet50, resnet18, mobilenet_v2   torchvision classifiers, weights=None, seeded; input [1,3,224,224]
  bert_base                          a 12-layer BERT-base encoder written with torch.nn (hidden 768,
                                     12 heads, FFN 3072, erf GELU, post-LayerNorm), input [1,128,768]

Each goes to DIR/<name>/model.onnx with DIR/<name>/test_data_set_0/{input_0.pb,output_0.pb} (ONNX's
test-data layout): a seeded random input and PyTorch's output for it. Models already there are kept.

  usage: export_models.py [--dir DIR] [NAME ...]     (default DIR: $XDG_CACHE_HOME/tilebank/models,
                                                      default names: all four)
Prints the model directory of each name, one per line.
"""
import argparse
import math
import os
import sys

import onnx
import torch
import torchvision
from onnx import numpy_helper

OPSET = 17


class EncoderLayer(torch.nn.Module):
    """One post-LayerNorm BERT layer: self-attention, residual, LayerNorm, FFN with erf GELU, residual, LayerNorm."""

    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)
        self.attention_output = torch.nn.Linear(hidden, hidden)
        self.attention_norm = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = torch.nn.Linear(hidden, ffn)
        self.output = torch.nn.Linear(ffn, hidden)
        self.output_norm = torch.nn.LayerNorm(hidden, eps=1e-12)

    def split_heads(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        batch, seq, hidden = x.shape
        q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        context = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(batch, seq, hidden)
        x = self.attention_norm(x + self.attention_output(context))
        return self.output_norm(x + self.output(torch.nn.functional.gelu(self.intermediate(x))))


class BertEncoder(torch.nn.Module):
    def __init__(self, layers=12):
        super().__init__()
        self.layers = torch.nn.ModuleList(EncoderLayer() for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build(name):
    torch.manual_seed(0)
    if name == "bert_base":
        model = BertEncoder()
        shape = (1, 128, 768)
    else:
        model = getattr(torchvision.models, name)(weights=None)
        shape = (1, 3, 224, 224)
    return model.eval(), torch.randn(*shape, generator=torch.Generator().manual_seed(1))


def export(name, directory):
    target = os.path.join(directory, name)
    model_path = os.path.join(target, "model.onnx")
    data = os.path.join(target, "test_data_set_0")
    if os.path.exists(model_path) and os.path.exists(os.path.join(data, "output_0.pb")):
        return target
    os.makedirs(data, exist_ok=True)
    model, x = build(name)
    with torch.no_grad():
        y = model(x)
    tmp = model_path + ".tmp"
    torch.onnx.export(model, x, tmp, opset_version=OPSET, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    onnx.checker.check_model(tmp)
    for file, tensor, tensor_name in (("input_0.pb", x, "input"), ("output_0.pb", y, "output")):
        with open(os.path.join(data, file), "wb") as f:
            f.write(numpy_helper.from_array(tensor.numpy(), tensor_name).SerializeToString())
    os.replace(tmp, model_path)
    return target


def main():
    names = ["resnet50", "resnet18", "mobilenet_v2", "bert_base"]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parser.add_argument("--dir", default=os.path.join(cache, "tilebank", "models"))
    parser.add_argument("names", nargs="*", default=names)
    args = parser.parse_args()
    for name in args.names:
        if name not in names and not hasattr(torchvision.models, name):
            print(f"export_models.py: unknown model '{name}' (one of {', '.join(names)} or a torchvision classifier)",
                  file=sys.stderr)
            return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args.names:
        print(export(name, args.dir), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
