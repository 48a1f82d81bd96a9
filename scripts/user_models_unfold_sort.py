"""Six families first run as held-out models (the ninth batch): two had a slow path (an unfold
written as Gathers of constant windows; an argsort and torch.gather); scripts/user_models.py
registers them:

  involution          involution blocks: per-pixel kernels from 1x1 convolutions applied to
                      nn.Unfold's 3x3 windows (torch.onnx writes Pad and Gathers of constant
                      indices), multiplied and summed over the window; [1,3,128,128] -> [1,10]
  clip_head           a CLIP-style zero-shot head: an image tower, L2-normalised image and class
                      embeddings (ReduceL2), a scaled cosine product, Softmax; [1,3,224,224] -> [1,1000]
  seq2seq             nn.Transformer encoder-decoder (2 + 2 layers, d 256) over token ids with a
                      causal target mask and cross-attention; [1,64] and [1,32] ids -> [1,32,1000]
  ctc_bigru           a CTC speech recogniser: a 2-D convolutional subsampler over mel frames, a
                      bidirectional 2-layer GRU, log-softmax over 32 symbols; [1,1,400,80]
  point_sort          point features scored and sorted (argsort: TopK of every point), the top half
                      gathered (torch.gather over an expanded index), max-pooled; [4,3,4096]
  ft_transformer      an FT-Transformer for tabular data: an embedding per categorical column, a
                      learned affine token per numeric one, a class token, 3 encoder layers;
                      [64,8] int64 categories and [64,16] numbers -> [64,2]
"""
import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class Involution(torch.nn.Module):
    def __init__(self, c=64, k=3, groups=4, blocks=3, classes=10):
        super().__init__()
        self.k, self.groups, self.blocks = k, groups, blocks
        self.stem, self.head = torch.nn.Conv2d(3, c, 3, 2, 1), torch.nn.Conv2d(c, classes, 1)
        self.reduce, self.span = torch.nn.Conv2d(c, c // 4, 1), torch.nn.Conv2d(c // 4, k * k * groups, 1)
        self.unfold = torch.nn.Unfold(k, 1, (k - 1) // 2, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        b, c, h, w = x.shape
        for _ in range(self.blocks):
            weight = self.span(F.relu(self.reduce(x))).view(b, self.groups, self.k * self.k, h, w).unsqueeze(2)
            patches = self.unfold(x).view(b, self.groups, c // self.groups, self.k * self.k, h, w)
            x = x + (weight * patches).sum(3).view(b, c, h, w)
        return self.head(x).mean((2, 3))


class ClipHead(torch.nn.Module):
    def __init__(self, width=64, d=512, classes=1000):
        super().__init__()
        self.image = torch.nn.Sequential(torch.nn.Conv2d(3, width, 7, 4, 3), torch.nn.ReLU(), torch.nn.Conv2d(width, 2 * width, 3, 2, 1), torch.nn.ReLU(),
                                         torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2 * width, d))
        self.classes = torch.nn.Parameter(torch.randn(classes, d))
        self.log_scale = torch.nn.Parameter(torch.tensor(4.6))

    def forward(self, x):
        image, classes = F.normalize(self.image(x), dim=-1), F.normalize(self.classes, dim=-1)
        return (self.log_scale.exp() * image @ classes.t()).softmax(-1)


class Seq2Seq(torch.nn.Module):
    def __init__(self, d=256, heads=4, layers=2, vocab=1000):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.transformer = torch.nn.Transformer(d, heads, layers, layers, 4 * d, 0.0, batch_first=True)
        self.out = torch.nn.Linear(d, vocab)

    def forward(self, source, target):
        mask = torch.triu(torch.full((target.shape[1], target.shape[1]), float("-inf")), 1)
        return self.out(self.transformer(self.embed(source), self.embed(target), tgt_mask=mask))


class CtcBiGru(torch.nn.Module):
    def __init__(self, mels=80, channels=32, hidden=256, symbols=32):
        super().__init__()
        self.subsample = torch.nn.Sequential(torch.nn.Conv2d(1, channels, 3, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(channels, channels, 3, 2, 1), torch.nn.ReLU())
        self.gru = torch.nn.GRU(channels * ((mels + 3) // 4), hidden, 2, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(2 * hidden, symbols)

    def forward(self, x):  # [B, 1, T, mels]
        f = self.subsample(x)
        b, c, t, m = f.shape
        y, _ = self.gru(f.permute(0, 2, 1, 3).reshape(b, t, c * m))
        return self.fc(y).log_softmax(-1)


class PointSort(torch.nn.Module):
    def __init__(self, c=64, classes=10):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Conv1d(3, c, 1), torch.nn.ReLU(), torch.nn.Conv1d(c, c, 1))
        self.score, self.fc = torch.nn.Conv1d(c, 1, 1), torch.nn.Linear(c, classes)

    def forward(self, points):  # [B, 3, N]
        f = self.mlp(points)
        order = torch.argsort(self.score(f).squeeze(1), -1, descending=True)[:, : points.shape[2] // 2]
        kept = torch.gather(f, 2, order.unsqueeze(1).expand(-1, f.shape[1], -1))
        return self.fc(kept.max(2).values)


class FtTransformer(torch.nn.Module):
    def __init__(self, categories=(100, 50, 20, 10, 500, 30, 7, 12), numbers=16, d=64, layers=3):
        super().__init__()
        self.embeddings = torch.nn.ModuleList([torch.nn.Embedding(n, d) for n in categories])
        self.number_weight, self.number_bias = torch.nn.Parameter(torch.randn(numbers, d)), torch.nn.Parameter(torch.randn(numbers, d))
        self.cls = torch.nn.Parameter(torch.randn(1, 1, d))
        self.encoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d, 8, 2 * d, 0.0, batch_first=True), layers)
        self.head = torch.nn.Linear(d, 2)

    def forward(self, categories, numbers):
        columns = torch.stack([e(categories[:, i]) for i, e in enumerate(self.embeddings)], 1)
        tokens = torch.cat([self.cls.expand(categories.shape[0], -1, -1), columns, numbers[..., None] * self.number_weight + self.number_bias], 1)
        return self.head(self.encoder(tokens)[:, 0])


def involution(small):
    model = Involution(c=16, blocks=1) if small else Involution()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(1, 3, 128, 128),), ["input"], None


def clip_head(small):
    model = ClipHead(width=8, d=16, classes=10) if small else ClipHead()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def seq2seq(small):
    model = Seq2Seq(d=16, heads=2, layers=1, vocab=50) if small else Seq2Seq()
    vocab = 50 if small else 1000
    inputs = (random_ids(vocab, (1, 8), 1), random_ids(vocab, (1, 5), 2)) if small else (random_ids(vocab, (1, 64), 1), random_ids(vocab, (1, 32), 2))
    return model.eval(), inputs, ["source", "target"], None


def ctc_bigru(small):
    model = CtcBiGru(mels=16, channels=4, hidden=8, symbols=5) if small else CtcBiGru()
    return model.eval(), (seeded(1, 1, 24, 16) if small else seeded(1, 1, 400, 80),), ["input"], None


def point_sort(small):
    model = PointSort(c=8) if small else PointSort()
    return model.eval(), (seeded(2, 3, 64) if small else seeded(4, 3, 4096),), ["input"], None


def ft_transformer(small):
    model = FtTransformer(categories=(10, 5, 7), numbers=4, d=16, layers=1) if small else FtTransformer()
    categories = random_ids(5, (8, 3), 1) if small else random_ids(7, (64, 8), 1)
    return model.eval(), (categories, seeded(8, 4) if small else seeded(64, 16)), ["categories", "numbers"], None
