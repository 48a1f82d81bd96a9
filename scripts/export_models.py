#!/usr/bin/python3
"""Exports the models tilebank's model tests, demo, benchmark and model zoo run, with PyTorch 1.13 at
opset 17 (Debian's python3-torch, python3-torchvision, python3-onnx; run with /usr/bin/python3):

  every torchvision 0.14 classifier  weights=None, seeded; input [1,3,224,224] (inception_v3: 299)
  its segmentation models            the "out" head only; input [1,3,224,224]
  bert_base                          a 12-layer BERT-base encoder written with torch.nn (hidden 768,
                                     12 heads, FFN 3072, erf GELU, post-LayerNorm), input [1,128,768]
  gpt_decoder                        GPT-2 small's 12 decoder blocks written with torch.nn (hidden 768,
                                     12 heads, pre-LayerNorm, causal mask, tanh GELU), input [1,128,768]
  transformer_encoder                torch.nn.TransformerEncoder (4 layers, d_model 256, 4 heads) with a
                                     key padding mask: inputs x [1,32,256], an additive float mask
                                     [1,32] (-inf on the last 8 positions); batch and sequence dynamic
  transformer_decoder                torch.nn.TransformerDecoder (4 layers, d_model 256, 4 heads) with a
                                     causal mask made inside the model: inputs tgt [1,24,256],
                                     memory [1,32,256]; batch and both sequences dynamic
  text, recurrent, audio, video,     the families of scripts/user_models.py: token-id encoders and
  generative and detection models    decoders, LSTM, GRU, Conv1d audio, r3d_18, a UNet, SSDlite

Each goes to DIR/<name>/model.onnx with DIR/<name>/test_data_set_0/{input_<i>.pb,output_0.pb} (ONNX's
test-data layout): seeded random inputs and PyTorch's output for them. Models already there are kept.
Models over 2 GB keep their weights in external files beside model.onnx.

  usage: export_models.py [--dir DIR] [NAME ...]     (default DIR: $XDG_CACHE_HOME/tilebank/models,
                                                      default names: the four of the benchmark)
Prints the model directory of each name, one per line.
"""
import argparse
import math
import os
import shutil
import sys

import onnx
import torch
import torchvision
from onnx import numpy_helper

import user_models

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


class GptBlock(torch.nn.Module):
    """One GPT-2 block: pre-LayerNorm causal self-attention and MLP (tanh GELU), each with its residual."""

    def __init__(self, hidden=768, heads=12):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.attention_norm = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.projection = torch.nn.Linear(hidden, hidden)
        self.mlp_norm = torch.nn.LayerNorm(hidden)
        self.up = torch.nn.Linear(hidden, 4 * hidden)
        self.down = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x, causal):
        batch, seq, hidden = x.shape
        q, k, v = (t.view(batch, seq, self.heads, self.head_dim).transpose(1, 2) for t in self.qkv(self.attention_norm(x)).split(hidden, dim=-1))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + causal
        context = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(batch, seq, hidden)
        x = x + self.projection(context)
        return x + self.down(torch.nn.functional.gelu(self.up(self.mlp_norm(x)), approximate="tanh"))


class GptDecoder(torch.nn.Module):
    """GPT-2 small's 12 blocks and final LayerNorm on hidden states; the causal mask is made from the
    sequence length inside the model."""

    def __init__(self, layers=12):
        super().__init__()
        self.blocks = torch.nn.ModuleList(GptBlock() for _ in range(layers))
        self.norm = torch.nn.LayerNorm(768)

    def forward(self, x):
        length = x.shape[1]
        causal = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        for block in self.blocks:
            x = block(x, causal)
        return self.norm(x)


class TransformerEncoder(torch.nn.Module):
    """torch.nn.TransformerEncoder with a key padding mask (additive float: 0 or -inf per position)."""

    def __init__(self, layers=4, d_model=256, heads=4, ffn=1024):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x, key_padding_mask):
        return self.encoder(x, src_key_padding_mask=key_padding_mask)


class TransformerDecoder(torch.nn.Module):
    """torch.nn.TransformerDecoder whose causal mask is made from the target's length inside the model."""

    def __init__(self, layers=4, d_model=256, heads=4, ffn=1024):
        super().__init__()
        layer = torch.nn.TransformerDecoderLayer(d_model, heads, ffn, dropout=0.0, batch_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, layers)

    def forward(self, tgt, memory):
        length = tgt.shape[1]
        causal = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        return self.decoder(tgt, memory, tgt_mask=causal)


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation model's "out" head (its forward returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


SEGMENTATION = ["deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50", "deeplabv3_resnet101", "fcn_resnet50", "fcn_resnet101",
                "lraspp_mobilenet_v3_large"]
TRANSFORMERS = ["transformer_encoder", "transformer_decoder"]


def randomize_zero_parameters(model):
    """Some torchvision models start with all-zero layers (ViT's head): their output would be zeros
    whatever the rest computes, and comparing it would prove nothing. Those get N(0, 0.02) values."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1 and not p.any():
                torch.nn.init.normal_(p, std=0.02)
    return model


def small_models():
    """One small member of each family, for the test suite: name -> (constructor, input side)."""
    tv = torchvision.models
    from torchvision.models import convnext, swin_transformer
    return {
        "small_resnet18": (lambda: tv.resnet18(), 64),
        "small_mobilenet_v2": (lambda: tv.mobilenet_v2(), 64),
        "small_mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(), 64),
        "small_efficientnet_b0": (lambda: tv.efficientnet_b0(), 64),
        "small_efficientnet_v2_s": (lambda: tv.efficientnet_v2_s(), 64),
        "small_regnet_y_400mf": (lambda: tv.regnet_y_400mf(), 64),
        "small_densenet121": (lambda: tv.densenet121(), 64),
        "small_shufflenet_v2_x0_5": (lambda: tv.shufflenet_v2_x0_5(), 64),
        "small_squeezenet1_1": (lambda: tv.squeezenet1_1(), 64),
        "small_mnasnet0_5": (lambda: tv.mnasnet0_5(), 64),
        "small_googlenet": (lambda: tv.googlenet(init_weights=True), 64),
        "small_inception_v3": (lambda: tv.inception_v3(init_weights=True), 96),
        "small_convnext": (lambda: tv.ConvNeXt([convnext.CNBlockConfig(16, 32, 2), convnext.CNBlockConfig(32, None, 1)], layer_scale=0.5), 32),
        "small_vit": (lambda: tv.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64), 32),
        "small_swin": (lambda: tv.SwinTransformer([4, 4], 16, [2, 2], [2, 2], [4, 4], stochastic_depth_prob=0.0), 32),
        "small_swin_v2": (lambda: tv.SwinTransformer([4, 4], 16, [2, 2], [2, 2], [4, 4], stochastic_depth_prob=0.0,
                                                     block=swin_transformer.SwinTransformerBlockV2,
                                                     downsample_layer=swin_transformer.PatchMergingV2), 32),
        "small_maxvit": (lambda: tv.MaxVit((32, 32), 16, 2, [16, 32], [1, 1], 8, 0.0), 32),
        "small_lraspp": (lambda: SegmentationOut(tv.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None)), 64),
        "small_deeplabv3": (lambda: SegmentationOut(tv.segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None)), 64),
        "small_fcn": (lambda: SegmentationOut(tv.segmentation.fcn_resnet50(weights_backbone=None)), 64),
        "small_transformer_encoder": (lambda: TransformerEncoder(layers=1, d_model=32, heads=2, ffn=64), None),
        "small_transformer_decoder": (lambda: TransformerDecoder(layers=1, d_model=32, heads=2, ffn=64), None),
    }


def classifiers():
    return sorted(torchvision.models.list_models(module=torchvision.models))


def known(name):
    return name in user_models.names() or name in ("bert_base", "gpt_decoder") or name in TRANSFORMERS or name in SEGMENTATION or name in classifiers() or name in small_models()


def family(name):
    """The zoo's family of a model: the torchvision module it comes from, transformer, or a user-model family."""
    if name in user_models.names():
        return user_models.family(name)
    if name in SEGMENTATION or name in ("small_lraspp", "small_deeplabv3", "small_fcn"):
        return "segmentation"
    if name in ("bert_base", "gpt_decoder") or name in TRANSFORMERS or name.startswith("small_transformer"):
        return "transformer"
    if name in small_models():
        return type(small_models()[name][0]()).__module__.split(".")[-1]
    return getattr(torchvision.models, name).__module__.split(".")[-1]


def build(name):
    """(model in eval mode, tuple of seeded inputs, input names, dynamic axes or None)."""
    if name in user_models.names():
        return user_models.build(name)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    if name == "bert_base":
        return BertEncoder().eval(), (torch.randn(1, 128, 768, generator=generator),), ["input"], None
    if name == "gpt_decoder":
        return GptDecoder().eval(), (torch.randn(1, 128, 768, generator=generator),), ["input"], None
    small = small_models().get(name)
    if name.endswith("transformer_encoder"):
        model = small[0]() if small else TransformerEncoder()
        width = model.encoder.layers[0].linear1.in_features
        mask = torch.zeros(1, 32)
        mask[:, 24:] = float("-inf")
        inputs = (torch.randn(1, 32, width, generator=generator), mask)
        axes = {"x": {0: "batch", 1: "sequence"}, "key_padding_mask": {0: "batch", 1: "sequence"}, "output": {0: "batch", 1: "sequence"}}
        return model.eval(), inputs, ["x", "key_padding_mask"], axes
    if name.endswith("transformer_decoder"):
        model = small[0]() if small else TransformerDecoder()
        width = model.decoder.layers[0].linear1.in_features
        inputs = (torch.randn(1, 24, width, generator=generator), torch.randn(1, 32, width, generator=generator))
        axes = {"tgt": {0: "batch", 1: "target"}, "memory": {0: "batch", 1: "source"}, "output": {0: "batch", 1: "target"}}
        return model.eval(), inputs, ["tgt", "memory"], axes
    if small:
        model = randomize_zero_parameters(small[0]())
        return model.eval(), (torch.randn(1, 3, small[1], small[1], generator=generator),), ["input"], None
    if name in SEGMENTATION:
        model = SegmentationOut(randomize_zero_parameters(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)))
        return model.eval(), (torch.randn(1, 3, 224, 224, generator=generator),), ["input"], None
    side = 299 if name == "inception_v3" else 224
    model = randomize_zero_parameters(getattr(torchvision.models, name)(weights=None))
    return model.eval(), (torch.randn(1, 3, side, side, generator=generator),), ["input"], None


def register_zero_symbolic():
    """PyTorch 1.13 cannot export aten::zero_, which Swin V2's attention applies to the key part of
    its qkv bias in every forward. It is exported as x - x, and the exporter drops the in-place
    write to the slice; zero_key_biases makes the weights hold those zeros already, so the model
    computes the same with or without the write."""
    torch.onnx.register_custom_op_symbolic("aten::zero", lambda g, self: g.op("Sub", self, self), OPSET)


def zero_key_biases(model):
    """Swin V2: the key third of each attention's qkv bias is zero in the weights (see register_zero_symbolic)."""
    from torchvision.models.swin_transformer import ShiftedWindowAttentionV2
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, ShiftedWindowAttentionV2) and m.qkv.bias is not None:
                length = m.qkv.bias.numel() // 3
                m.qkv.bias[length:2 * length].zero_()
    return model


def export(name, directory):
    target = os.path.join(directory, name)
    model_path = os.path.join(target, "model.onnx")
    data = os.path.join(target, "test_data_set_0")
    if os.path.exists(model_path) and os.path.exists(os.path.join(data, "output_0.pb")):
        return target
    os.makedirs(data, exist_ok=True)
    model, inputs, input_names, dynamic_axes = build(name)
    zero_key_biases(model)
    with torch.no_grad():
        y = model(*inputs)
    outputs = list(y) if isinstance(y, tuple) else [y]  # a decode step also returns its caches
    output_names = ["output"] + [f"output_{k}" for k in range(1, len(outputs))]
    # Exported into a folder of its own first: a model over 2 GB writes its weights as external
    # files beside the .onnx, and they move with it.
    staging = os.path.join(target, "export.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    tmp = os.path.join(staging, "model.onnx")
    register_zero_symbolic()
    torch.onnx.export(model, inputs, tmp, opset_version=OPSET, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes, do_constant_folding=True)
    onnx.checker.check_model(tmp)
    if name in user_models.POSTPROCESS:
        user_models.POSTPROCESS[name](tmp, inputs)
    files = [(f"input_{i}.pb", x, input_name) for i, (x, input_name) in enumerate(zip(inputs, input_names))]
    for file, tensor, tensor_name in files + [(f"output_{k}.pb", t, n) for k, (t, n) in enumerate(zip(outputs, output_names))]:
        with open(os.path.join(data, file), "wb") as f:
            f.write(numpy_helper.from_array(tensor.numpy(), tensor_name).SerializeToString())
    for file in os.listdir(staging):
        if file != "model.onnx":
            os.replace(os.path.join(staging, file), os.path.join(target, file))
    os.replace(tmp, model_path)
    os.rmdir(staging)
    return target


def main():
    names = ["resnet50", "resnet18", "mobilenet_v2", "bert_base"]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parser.add_argument("--dir", default=os.path.join(cache, "tilebank", "models"))
    parser.add_argument("names", nargs="*", default=names)
    args = parser.parse_args()
    for name in args.names:
        if not known(name):
            print(f"export_models.py: unknown model '{name}' (bert_base, gpt_decoder, {', '.join(TRANSFORMERS)}, a torchvision classifier "
                  f"or one of {', '.join(SEGMENTATION)})", file=sys.stderr)
            return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args.names:
        print(export(name, args.dir), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
