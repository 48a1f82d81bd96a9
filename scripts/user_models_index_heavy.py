"""Six families first run as held-out models whose time went to index, reduction and movement ops
on the reference kernels (argmax, one-hot, ScatterND, a Loop's reductions, TopK), or to nothing
amiss; scripts/user_models.py registers them:

  temporal_shift      TSM over 8 frames: part of the channels shifted a frame forward and back by
                      slice assignment (ScatterND with constant indices) between 2-D convolutions;
                      [8,3,112,112]
  dlrm                DLRM-style recommender: 8 EmbeddingBag(sum) tables (a Loop per table over the
                      bags: Gather, ReduceSum), a bottom MLP, pairwise dot interactions picked by
                      triu indices, a top MLP; [32,13] floats and [32,8,20] int64 ids
  segment_onehot      a per-pixel classification head: ArgMax over classes, its one-hot (OneHot with
                      a constant depth), both cast to float and concatenated; [1,3,256,256]
  retrieval           a query encoder scored against 20000 normalized gallery embeddings, the top 10
                      by TopK; [4,512]
  relative_bias       T5-style relative position buckets (int64 arithmetic, Log, Where) into an
                      attention bias, then a transformer encoder layer; [1,128,256]
  demucs_lite         a Demucs-like 1-D audio UNet: strided Conv1d with GLU, a bidirectional LSTM,
                      ConvTranspose1d decoders with skips; [1,1,32000]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import seeded


class TemporalShift(torch.nn.Module):
    def __init__(self, width=32, frames=8):
        super().__init__()
        self.frames = frames
        self.c1 = torch.nn.Conv2d(3, width, 3, 2, 1)
        self.c2 = torch.nn.Conv2d(width, 2 * width, 3, 2, 1)
        self.c3 = torch.nn.Conv2d(2 * width, 2 * width, 3, 1, 1)
        self.fc = torch.nn.Linear(2 * width, 10)

    def shift(self, x):
        nt, c, h, w = x.shape
        x = x.view(nt // self.frames, self.frames, c, h, w)
        fold = c // 8
        out = torch.zeros_like(x)
        out[:, :-1, :fold] = x[:, 1:, :fold]
        out[:, 1:, fold:2 * fold] = x[:, :-1, fold:2 * fold]
        out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
        return out.view(nt, c, h, w)

    def forward(self, x):
        x = F.relu(self.c1(x))
        x = F.relu(self.c2(self.shift(x)))
        x = F.relu(self.c3(self.shift(x)))
        return self.fc(x.mean((2, 3)).view(-1, self.frames, x.shape[1]).mean(1))


class Dlrm(torch.nn.Module):
    def __init__(self, tables=8, rows=10000, dim=64):
        super().__init__()
        self.emb = torch.nn.ModuleList([torch.nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables)])
        self.bottom = torch.nn.Sequential(torch.nn.Linear(13, 256), torch.nn.ReLU(), torch.nn.Linear(256, dim), torch.nn.ReLU())
        pairs = (tables + 1) * tables // 2
        self.top = torch.nn.Sequential(torch.nn.Linear(dim + pairs, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
        self.register_buffer("pairs", torch.triu_indices(tables + 1, tables + 1, 1))

    def forward(self, dense, sparse):
        z = [self.bottom(dense)] + [table(sparse[:, i]) for i, table in enumerate(self.emb)]
        t = torch.stack(z, 1)
        dots = t @ t.transpose(1, 2)
        return torch.sigmoid(self.top(torch.cat([z[0], dots[:, self.pairs[0], self.pairs[1]]], 1)))


class SegmentOneHot(torch.nn.Module):
    def __init__(self, width=32, classes=10):
        super().__init__()
        self.classes = classes
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, width, 3, 2, 1), torch.nn.Hardswish(), torch.nn.Conv2d(width, classes, 1))

    def forward(self, x):
        y = self.features(x)
        labels = y.argmax(1)
        return torch.cat([labels.unsqueeze(1).float(), F.one_hot(labels, self.classes).float().permute(0, 3, 1, 2)], 1)


class Retrieval(torch.nn.Module):
    def __init__(self, gallery=20000, dim=256, k=10):
        super().__init__()
        self.k = k
        self.encoder = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, dim))
        self.register_buffer("gallery", F.normalize(seeded(gallery, dim), dim=1))

    def forward(self, query):
        scores = F.normalize(self.encoder(query), dim=-1) @ self.gallery.t()
        values, indices = scores.topk(self.k, -1)
        return torch.cat([values, indices.float()], -1)


class RelativeBias(torch.nn.Module):
    def __init__(self, d=256, heads=4, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.buckets, self.max_distance = heads, buckets, max_distance
        self.bias = torch.nn.Embedding(buckets, heads)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, 0.0, batch_first=True)

    def bucket(self, relative):
        half = self.buckets // 2
        exact = half // 2
        n = relative.abs()
        log_part = exact + (torch.log(n.float().clamp(min=1) / exact) / math.log(self.max_distance / exact) * (half - exact)).long()
        log_part = torch.min(log_part, torch.full_like(log_part, half - 1))
        return (relative > 0).long() * half + torch.where(n < exact, n, log_part)

    def forward(self, x):
        b, t, d = x.shape
        position = torch.arange(t)
        bias = self.bias(self.bucket(position[None, :] - position[:, None])).permute(2, 0, 1)[None]
        q, k, v = self.qkv(x).chunk(3, -1)
        heads = lambda m: m.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        attention = torch.softmax(heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(d // self.heads) + bias, -1) @ heads(v)
        return self.layer(x + self.proj(attention.transpose(1, 2).reshape(b, t, d)))


class DemucsLite(torch.nn.Module):
    def __init__(self, width=32, depth=3):
        super().__init__()
        self.encoders, self.decoders = torch.nn.ModuleList(), torch.nn.ModuleList()
        c_in, c = 1, width
        for level in range(depth):
            self.encoders.append(torch.nn.Sequential(torch.nn.Conv1d(c_in, c, 8, 4), torch.nn.ReLU(), torch.nn.Conv1d(c, 2 * c, 1), torch.nn.GLU(1)))
            decoder = [torch.nn.Conv1d(c, 2 * c, 3, padding=1), torch.nn.GLU(1), torch.nn.ConvTranspose1d(c, c_in, 8, 4)]
            self.decoders.insert(0, torch.nn.Sequential(*decoder, *([torch.nn.ReLU()] if level else [])))
            c_in, c = c, 2 * c
        self.lstm = torch.nn.LSTM(c_in, c_in, 2, bidirectional=True, batch_first=True)
        self.linear = torch.nn.Linear(2 * c_in, c_in)

    def forward(self, x):
        skips = []
        for encoder in self.encoders:
            x = encoder(x)
            skips.append(x)
        y, _ = self.lstm(x.transpose(1, 2))
        x = self.linear(y).transpose(1, 2)
        for decoder in self.decoders:
            skip = skips.pop()
            x = decoder(x + skip[..., :x.shape[-1]])
        return x


def temporal_shift(small):
    model = TemporalShift(width=16) if small else TemporalShift()
    return model.eval(), (seeded(8, 3, 32, 32) if small else seeded(8, 3, 112, 112),), ["input"], None


def dlrm(small):
    model = Dlrm(tables=3, rows=100, dim=8) if small else Dlrm()
    tables, rows = (3, 100) if small else (8, 10000)
    ids = torch.randint(0, rows, (4 if small else 32, tables, 5 if small else 20), generator=torch.Generator().manual_seed(2))
    return model.eval(), (seeded(ids.shape[0], 13), ids), ["dense", "sparse"], None


def segment_onehot(small):
    model = SegmentOneHot(width=8, classes=5) if small else SegmentOneHot()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["input"], None


def retrieval(small):
    model = Retrieval(gallery=500, dim=32, k=5) if small else Retrieval()
    return model.eval(), (seeded(2 if small else 4, 512),), ["query"], None


def relative_bias(small):
    model = RelativeBias(d=32, heads=2) if small else RelativeBias()
    return model.eval(), (seeded(1, 24, 32) if small else seeded(1, 128, 256),), ["input"], None


def demucs_lite(small):
    model = DemucsLite(width=8, depth=2) if small else DemucsLite()
    return model.eval(), (seeded(1, 1, 1600) if small else seeded(1, 1, 32000),), ["input"], None
