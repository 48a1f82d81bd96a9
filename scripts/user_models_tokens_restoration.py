"""Five families first run as held-out models (the eighteenth batch); scripts/user_models.py registers
them:

  bag_of_unique       a bag-of-words document classifier: the document's distinct tokens by Unique
                      (sorted, with each position's inverse index), their counts by comparing the
                      inverse with a Range (Equal, ReduceSum), embeddings of the distinct tokens weighted by log(1 + count),
                      averaged, an MLP; ids [512] -> [20]
  lppool_net          a CNN downsampling by power-average pooling (LPPool2d, p = 2: Pow, AveragePool,
                      Sign, Abs, Relu) between Conv + BatchNorm + Softsign stages; [4,3,64,64] -> [4,10]
  restormer_lite      a Restormer-style restoration transformer: transposed (channel) attention over
                      L2-normalized queries and keys with a learned temperature, gated depthwise-
                      convolution feed-forward (GELU gate), LayerNorm over channels, PixelUnshuffle
                      down and PixelShuffle up (SpaceToDepth and DepthToSpace as Reshape/Transpose),
                      a global residual; [1,3,128,128] -> [1,3,128,128]
  causal_linear_lm    a causal linear-attention language model: ELU + 1 feature maps, the running
                      key-value outer products and key sums by CumSum over the sequence, a lower-
                      triangular (Trilu) local mixing matrix beside them; ids [2,128] -> logits
  gumbel_vq           a VQ autoencoder with a hard codebook choice: strided convolutions to logits
                      over 64 codes, ArgMax and OneHot (the straight-through choice at inference), the
                      codebook by MatMul, a ConvTranspose decoder; [2,3,64,64] -> [2,3,64,64]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded
from user_models_modern import ChannelsFirstLayerNorm


class BagOfUnique(torch.nn.Module):
    def __init__(self, vocab=5000, d=64, hidden=128, classes=20):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes))

    def forward(self, ids):
        tokens, inverse = torch.unique(ids, sorted=True, return_inverse=True)
        counts = (inverse.unsqueeze(1) == torch.arange(tokens.shape[0]).unsqueeze(0)).float().sum(0)
        weights = torch.log1p(counts).unsqueeze(1)
        document = (self.embedding(tokens) * weights).sum(0) / weights.sum()
        return self.mlp(document)


class LpPoolNet(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128), classes=10):
        super().__init__()
        layers, cin = [], 3
        for w in widths:
            layers += [torch.nn.Conv2d(cin, w, 3, padding=1), torch.nn.BatchNorm2d(w), torch.nn.Softsign(), torch.nn.LPPool2d(2, 2, 2)]
            cin = w
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class TransposedAttention(torch.nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.heads = heads
        self.temperature = torch.nn.Parameter(torch.linspace(0.5, 1.5, heads).reshape(heads, 1, 1))
        self.qkv = torch.nn.Conv2d(channels, 3 * channels, 1)
        self.qkv_depthwise = torch.nn.Conv2d(3 * channels, 3 * channels, 3, padding=1, groups=3 * channels)
        self.out = torch.nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv_depthwise(self.qkv(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        attention = torch.softmax(q @ k.transpose(-1, -2) * self.temperature, -1)  # [b, heads, c/h, c/h]
        return self.out((attention @ v).reshape(b, c, h, w))


class GatedDconvFeedForward(torch.nn.Module):
    def __init__(self, channels, expansion=2):
        super().__init__()
        hidden = channels * expansion
        self.project_in = torch.nn.Conv2d(channels, 2 * hidden, 1)
        self.depthwise = torch.nn.Conv2d(2 * hidden, 2 * hidden, 3, padding=1, groups=2 * hidden)
        self.project_out = torch.nn.Conv2d(hidden, channels, 1)

    def forward(self, x):
        gate, value = self.depthwise(self.project_in(x)).chunk(2, 1)
        return self.project_out(F.gelu(gate) * value)


class RestormerBlock(torch.nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.norm1, self.norm2 = ChannelsFirstLayerNorm(channels, eps=1e-5), ChannelsFirstLayerNorm(channels, eps=1e-5)
        self.attention, self.ffn = TransposedAttention(channels, heads), GatedDconvFeedForward(channels)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class RestormerLite(torch.nn.Module):
    def __init__(self, channels=24, heads=(1, 2), blocks=2):
        super().__init__()
        self.embed = torch.nn.Conv2d(3, channels, 3, padding=1)
        self.level1 = torch.nn.Sequential(*[RestormerBlock(channels, heads[0]) for _ in range(blocks)])
        self.down = torch.nn.Sequential(torch.nn.Conv2d(channels, channels // 2, 3, padding=1), torch.nn.PixelUnshuffle(2))
        self.level2 = torch.nn.Sequential(*[RestormerBlock(2 * channels, heads[1]) for _ in range(blocks)])
        self.up = torch.nn.Sequential(torch.nn.Conv2d(2 * channels, 4 * channels, 3, padding=1), torch.nn.PixelShuffle(2))
        self.fuse = torch.nn.Conv2d(2 * channels, channels, 1)
        self.refine = torch.nn.Sequential(*[RestormerBlock(channels, heads[0]) for _ in range(blocks)])
        self.output = torch.nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, image):
        x1 = self.level1(self.embed(image))
        x2 = self.level2(self.down(x1))
        x = self.refine(self.fuse(torch.cat([self.up(x2), x1], 1)))
        return image + self.output(x)


class CausalLinearLm(torch.nn.Module):
    def __init__(self, vocab=2000, d=128, heads=4, layers=2, local=16):
        super().__init__()
        self.heads, self.head_dim, self.local = heads, d // heads, local
        self.embedding = torch.nn.Embedding(vocab, d)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(d, 3 * d) for _ in range(layers))
        self.out = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(layers))
        self.ffn = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d)) for _ in range(layers))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(2 * layers))
        self.head = torch.nn.Linear(d, vocab)

    def attend(self, x, qkv):
        b, t, d = x.shape
        q, k, v = qkv(x).reshape(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)  # [b, h, t, e]
        q, k = F.elu(q) + 1, F.elu(k) + 1
        kv = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), 2)  # [b, h, t, e, e]
        numerator = (q.unsqueeze(-2) @ kv).squeeze(-2)
        denominator = (q * torch.cumsum(k, 2)).sum(-1, keepdim=True)
        # A local window beside the running sums: the last `local` tokens mixed by a banded lower triangle.
        scores = torch.tril(torch.triu(q @ k.transpose(-1, -2), -self.local))
        local = scores @ v / (scores.sum(-1, keepdim=True) + 1e-6)
        return (numerator / denominator + local).transpose(1, 2).reshape(b, t, d)

    def forward(self, ids):
        x = self.embedding(ids)
        for i, (qkv, out, ffn) in enumerate(zip(self.qkv, self.out, self.ffn)):
            x = x + out(self.attend(self.norms[2 * i](x), qkv))
            x = x + ffn(self.norms[2 * i + 1](x))
        return self.head(x)


class GumbelVq(torch.nn.Module):
    def __init__(self, width=64, codes=64, code_dim=32):
        super().__init__()
        self.encoder = torch.nn.Sequential(
            torch.nn.Conv2d(3, width, 4, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(width, width, 4, stride=2, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(width, codes, 1))
        self.codebook = torch.nn.Parameter(torch.randn(codes, code_dim, generator=torch.Generator().manual_seed(11)))
        self.codes = codes
        self.decoder = torch.nn.Sequential(
            torch.nn.Conv2d(code_dim, width, 3, padding=1), torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(width, width, 4, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(width, 3, 4, stride=2, padding=1))

    def forward(self, image):
        logits = self.encoder(image).permute(0, 2, 3, 1)  # [b, h, w, codes]
        chosen = F.one_hot(logits.argmax(-1), self.codes).float()
        quantized = (chosen @ self.codebook).permute(0, 3, 1, 2)
        return self.decoder(quantized)


def bag_of_unique(small):
    model = BagOfUnique(vocab=50, d=8, hidden=16, classes=3) if small else BagOfUnique()
    return model.eval(), (random_ids(50 if small else 5000, (30 if small else 512,), 5),), ["ids"], None


def lppool_net(small, batch_norm_statistics):
    model = LpPoolNet(widths=(4, 8), classes=3) if small else LpPoolNet()
    return batch_norm_statistics(model).eval(), (seeded(2, 3, 16, 16) if small else seeded(4, 3, 64, 64),), ["images"], None


def restormer_lite(small):
    model = RestormerLite(channels=8, heads=(1, 2), blocks=1) if small else RestormerLite()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(1, 3, 128, 128),), ["image"], None


def causal_linear_lm(small):
    model = CausalLinearLm(vocab=50, d=16, heads=2, layers=1, local=3) if small else CausalLinearLm()
    return model.eval(), (random_ids(50 if small else 2000, (1, 9) if small else (2, 128), 6),), ["ids"], None


def gumbel_vq(small):
    model = GumbelVq(width=8, codes=8, code_dim=4) if small else GumbelVq()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(2, 3, 64, 64),), ["images"], None
