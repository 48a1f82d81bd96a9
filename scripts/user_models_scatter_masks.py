"""Six families first run as held-out models (the tenth batch), all at or under ONNX Runtime's time
on their first run once the ninth batch's fixes were in; scripts/user_models.py registers them:

  gnn_scatter         message passing over an edge list: node features gathered at both ends of
                      each edge, an MLP message, summed into the target nodes by scatter_add
                      (ScatterElements, reduction add); 2000 nodes, 16000 edges -> [2000,8]
  perceiver           a Perceiver-style encoder: 256 learned latents cross-attending to 4096 input
                      tokens, then 4 self-attention layers over the latents; [1,4096,64] -> [1,10]
  textcnn             Kim's CNN for sentences: a 20000 x 300 embedding, Conv1d of widths 3, 4 and 5,
                      max over time, concatenation; [1,400] ids -> [1,2]
  bifpn_lite          an EfficientDet-style BiFPN: a 5-level stride-2 SiLU stem, learned fusion
                      weights (ReLU, normalised by their sum), nearest upsampling to each level's
                      size, depthwise separable convolutions, a shared head; [1,3,256,256]
  kan                 a Kolmogorov-Arnold network: cubic B-spline bases of each input built from
                      comparisons (GreaterOrEqual, Less, And, Cast) and divisions, mixed by einsum,
                      plus a SiLU base branch; [256,64] -> [256,10]
  sparse_topk         top-k sparse attention: per query only the 32 largest scores kept (TopK,
                      scattered into -inf), softmax; 2 layers over [1,512,256]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class GnnScatter(torch.nn.Module):
    def __init__(self, features=16, width=64, layers=3, classes=8):
        super().__init__()
        self.embed = torch.nn.Linear(features, width)
        self.messages = torch.nn.ModuleList([torch.nn.Linear(2 * width, width) for _ in range(layers)])
        self.updates = torch.nn.ModuleList([torch.nn.Linear(2 * width, width) for _ in range(layers)])
        self.out = torch.nn.Linear(width, classes)

    def forward(self, x, edges):  # x [N, features], edges [2, E] (source, target)
        h = F.relu(self.embed(x))
        source, target = edges[0], edges[1]
        for message, update in zip(self.messages, self.updates):
            m = F.relu(message(torch.cat([h[source], h[target]], -1)))
            summed = torch.zeros_like(h).scatter_add(0, target.unsqueeze(1).expand(-1, h.shape[1]), m)
            h = F.relu(update(torch.cat([h, summed], -1)))
        return self.out(h)


class Perceiver(torch.nn.Module):
    def __init__(self, d=128, latents=256, inputs=64, layers=4, classes=10):
        super().__init__()
        self.latents = torch.nn.Parameter(torch.randn(1, latents, d))
        self.kv = torch.nn.Linear(inputs, d)
        self.cross = torch.nn.MultiheadAttention(d, 1, batch_first=True)
        self.layers = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, batch_first=True), layers)
        self.fc = torch.nn.Linear(d, classes)

    def forward(self, x):
        kv = self.kv(x)
        q = self.latents.expand(x.shape[0], -1, -1)
        return self.fc(self.layers(q + self.cross(q, kv, kv, need_weights=False)[0]).mean(1))


class TextCnn(torch.nn.Module):
    def __init__(self, vocab=20000, d=300, filters=100, classes=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.convs = torch.nn.ModuleList([torch.nn.Conv1d(d, filters, k) for k in (3, 4, 5)])
        self.fc = torch.nn.Linear(3 * filters, classes)

    def forward(self, tokens):
        e = self.embed(tokens).transpose(1, 2)
        return self.fc(torch.cat([F.relu(conv(e)).max(2).values for conv in self.convs], 1))


class BiFpnLite(torch.nn.Module):
    def __init__(self, c=64, levels=5, anchors=9):
        super().__init__()
        self.stem = torch.nn.ModuleList([torch.nn.Conv2d(3 if i == 0 else c, c, 3, 2, 1) for i in range(levels)])
        self.weights = torch.nn.Parameter(torch.ones(levels - 1, 2))
        self.separable = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, 1, 1, groups=c), torch.nn.Conv2d(c, c, 1), torch.nn.BatchNorm2d(c))
                                              for _ in range(levels - 1)])
        self.head = torch.nn.Conv2d(c, anchors * 4, 3, 1, 1)

    def forward(self, x):
        features = []
        for conv in self.stem:
            x = F.silu(conv(x))
            features.append(x)
        p, outputs = features[-1], []
        for i, separable in enumerate(self.separable):
            level = features[-2 - i]
            w = F.relu(self.weights[i])
            w = w / (w.sum() + 1e-4)
            p = separable(F.silu(w[0] * level + w[1] * F.interpolate(p, size=level.shape[2:], mode="nearest")))
            outputs.append(self.head(p).flatten(2))
        return torch.cat(outputs, 2)


class Kan(torch.nn.Module):
    def __init__(self, dims=(64, 128, 128, 10), grid=8, order=3):
        super().__init__()
        self.order = order
        self.register_buffer("knots", torch.arange(-order, grid + order + 1) * (2.0 / grid) - 1.0)
        self.coefficients = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(o, i, grid + order) * 0.1) for i, o in zip(dims[:-1], dims[1:])])
        self.base = torch.nn.ModuleList([torch.nn.Linear(i, o) for i, o in zip(dims[:-1], dims[1:])])

    def bases(self, x):  # Cox-de Boor: [B, in] -> [B, in, grid + order]
        g, x = self.knots, x.unsqueeze(-1)
        b = ((x >= g[:-1]) & (x < g[1:])).to(x.dtype)
        for k in range(1, self.order + 1):
            b = (x - g[:-(k + 1)]) / (g[k:-1] - g[:-(k + 1)]) * b[..., :-1] + (g[k + 1:] - x) / (g[k + 1:] - g[1:-k]) * b[..., 1:]
        return b

    def forward(self, x):
        for coefficients, base in zip(self.coefficients, self.base):
            x = base(F.silu(x)) + torch.einsum("big,oig->bo", self.bases(torch.tanh(x)), coefficients)
        return x


class SparseTopk(torch.nn.Module):
    def __init__(self, d=256, heads=4, topk=32, layers=2):
        super().__init__()
        self.heads, self.topk = heads, topk
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])

    def forward(self, x):
        b, n, d = x.shape
        for qkv, out in zip(self.qkv, self.out):
            q, k, v = qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
            top, where = scores.topk(self.topk, -1)
            scores = torch.full_like(scores, float("-inf")).scatter(-1, where, top)
            x = x + out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))
        return x


def gnn_scatter(small):
    model = GnnScatter(width=8, layers=1) if small else GnnScatter()
    nodes, edges = (50, 200) if small else (2000, 16000)
    return model.eval(), (seeded(nodes, 16), torch.stack([random_ids(nodes, (edges,), 1), random_ids(nodes, (edges,), 2)])), ["features", "edges"], None


def perceiver(small):
    model = Perceiver(d=16, latents=8, inputs=8, layers=1) if small else Perceiver()
    return model.eval(), (seeded(1, 64, 8) if small else seeded(1, 4096, 64),), ["input"], None


def textcnn(small):
    model = TextCnn(vocab=100, d=16, filters=4) if small else TextCnn()
    return model.eval(), (random_ids(100, (1, 20), 1) if small else random_ids(20000, (1, 400), 1),), ["tokens"], None


def bifpn_lite(small, batch_norm_statistics):
    model = BiFpnLite(c=8, anchors=1) if small else BiFpnLite()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64, 64) if small else seeded(1, 3, 256, 256),), ["input"], None


def kan(small):
    model = Kan(dims=(8, 8, 4), grid=4) if small else Kan()
    return model.eval(), (seeded(16, 8) if small else seeded(256, 64),), ["input"], None


def sparse_topk(small):
    model = SparseTopk(d=16, heads=2, topk=4, layers=1) if small else SparseTopk()
    return model.eval(), (seeded(1, 16, 16) if small else seeded(1, 512, 256),), ["input"], None
