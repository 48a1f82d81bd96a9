"""Eight families first run as held-out models (the thirteenth batch); scripts/user_models.py registers
them:

  convmixer           ConvMixer: a 7x7 patch embedding, then blocks of a depthwise 9x9 convolution, GELU
                      and BatchNorm with a residual, and a pointwise one, GELU and BatchNorm (the norm
                      after the activation, so it cannot fold into the convolution); [1,3,224,224] -> [1,1000]
  dit                 a DiT-style diffusion transformer: a 2x2 patchify convolution of a latent, a
                      sinusoidal timestep embedding through an MLP, adaLN-zero blocks (LayerNorm, shift, scale
                      and gate from the timestep), unpatchify by reshapes (the norms keep their affine
                      weights: torch 1.13 writes an invalid LayerNormalization without them);
                      latent [1,4,32,32] and timestep [1] -> [1,4,32,32]
  glow                a Glow-style normalizing flow: squeeze (space to depth by reshapes), ActNorm, an
                      invertible 1x1 convolution, affine coupling (split, a small CNN, a sigmoid scale),
                      the log-determinant summed per level, half the channels split off per level;
                      [1,3,64,64] -> z [1,12288] and logdet [1]
  keyword_spotter     keyword spotting from the waveform: an STFT as a strided Conv1d with Hann-windowed
                      cosine and sine kernels (as nnAudio-style front ends export: torch 1.13 has no
                      ONNX STFT), power, a mel filter bank by MatMul, log, then a small CNN;
                      [1,16000] -> [1,12]
  patchtst            PatchTST: each channel's series cut into overlapping patches (Tensor.unfold on
                      axis 2: torch 1.13 exports unfold(-1, ...) with the last two axes swapped, which
                      ONNX Runtime and tilebank both compute), a linear patch embedding, a transformer with BatchNorm instead of LayerNorm, a
                      flatten head; [1,7,512] -> [1,7,96]
  poolformer          PoolFormer: token mixing by average pooling without the padding (pool(x) - x),
                      GroupNorm over one group, 1x1 MLPs with GELU, layer scale; [1,3,224,224] -> [1,1000]
  dcn_v2              DCN-v2 recommendation: 26 embedding tables and 13 dense features, cross layers
                      x0 * (W x + b) + x beside a deep MLP, a sigmoid; batch 256 -> [256,1]
  detr                a DETR-style detector: a ResNet-style backbone, a 1x1 projection, sine position
                      encodings, a transformer encoder-decoder with 100 learned queries, class and box
                      heads (softmax, sigmoid); [1,3,256,256] -> [1,100,92] and [1,100,4]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class ConvMixer(torch.nn.Module):
    def __init__(self, dim=256, depth=8, kernel=9, patch=7, classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, dim, patch, patch), torch.nn.GELU(), torch.nn.BatchNorm2d(dim))
        self.depthwise = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Conv2d(dim, dim, kernel, groups=dim, padding=kernel // 2), torch.nn.GELU(),
                                                                 torch.nn.BatchNorm2d(dim)) for _ in range(depth))
        self.pointwise = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Conv2d(dim, dim, 1), torch.nn.GELU(), torch.nn.BatchNorm2d(dim)) for _ in range(depth))
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        x = self.stem(x)
        for depthwise, pointwise in zip(self.depthwise, self.pointwise):
            x = pointwise(depthwise(x) + x)
        return self.head(x.mean((2, 3)))


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], -1)


class DiTBlock(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d, eps=1e-6)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d, eps=1e-6)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(approximate="tanh"), torch.nn.Linear(4 * d, d))
        self.modulation = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Linear(d, 6 * d))

    def attention(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        return self.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))

    def forward(self, x, c):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.modulation(c).unsqueeze(1).chunk(6, -1)
        x = x + gate1 * self.attention(self.norm1(x) * (1 + scale1) + shift1)
        return x + gate2 * self.mlp(self.norm2(x) * (1 + scale2) + shift2)


class DiT(torch.nn.Module):
    def __init__(self, channels=4, size=32, patch=2, d=384, heads=6, depth=6):
        super().__init__()
        self.channels, self.size, self.patch, self.d = channels, size, patch, d
        self.patchify = torch.nn.Conv2d(channels, d, patch, patch)
        tokens = (size // patch) ** 2
        self.positions = torch.nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.time = torch.nn.Sequential(torch.nn.Linear(256, d), torch.nn.SiLU(), torch.nn.Linear(d, d))
        self.blocks = torch.nn.ModuleList(DiTBlock(d, heads) for _ in range(depth))
        self.final_norm = torch.nn.LayerNorm(d, eps=1e-6)
        self.final_modulation = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Linear(d, 2 * d))
        self.out = torch.nn.Linear(d, patch * patch * channels)

    def forward(self, latent, timestep):
        x = self.patchify(latent).flatten(2).transpose(1, 2) + self.positions
        c = self.time(timestep_embedding(timestep, 256))
        for block in self.blocks:
            x = block(x, c)
        shift, scale = self.final_modulation(c).unsqueeze(1).chunk(2, -1)
        x = self.out(self.final_norm(x) * (1 + scale) + shift)
        side, p = self.size // self.patch, self.patch
        x = x.view(1, side, side, p, p, self.channels)
        return torch.einsum("nhwpqc->nchpwq", x).reshape(1, self.channels, self.size, self.size)


def squeeze2d(x):
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(b, c * 4, h // 2, w // 2)


class FlowStep(torch.nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.log_scale = torch.nn.Parameter(torch.randn(1, c, 1, 1) * 0.05)
        self.bias = torch.nn.Parameter(torch.randn(1, c, 1, 1) * 0.05)
        q, _ = torch.linalg.qr(torch.randn(c, c))
        self.weight = torch.nn.Parameter(q.reshape(c, c, 1, 1))
        self.register_buffer("weight_logdet", torch.slogdet(q)[1])
        self.coupling = torch.nn.Sequential(torch.nn.Conv2d(c // 2, hidden, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(hidden, hidden, 1), torch.nn.ReLU(),
                                            torch.nn.Conv2d(hidden, c, 3, padding=1))

    def forward(self, x, logdet):
        h, w = x.shape[2], x.shape[3]
        x = (x + self.bias) * torch.exp(self.log_scale)
        logdet = logdet + h * w * self.log_scale.sum()
        x = F.conv2d(x, self.weight)
        logdet = logdet + h * w * self.weight_logdet
        a, b = x.chunk(2, 1)
        shift, raw = self.coupling(a).chunk(2, 1)
        scale = torch.sigmoid(raw + 2.0)
        b = (b + shift) * scale
        logdet = logdet + torch.log(scale).flatten(1).sum(1)
        return torch.cat([a, b], 1), logdet


class Glow(torch.nn.Module):
    def __init__(self, channels=3, levels=3, steps=4, hidden=128):
        super().__init__()
        self.levels = torch.nn.ModuleList()
        c = channels
        for _ in range(levels):
            c *= 4
            self.levels.append(torch.nn.ModuleList(FlowStep(c, hidden) for _ in range(steps)))
            c //= 2

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        out = []
        for i, level in enumerate(self.levels):
            x = squeeze2d(x)
            for step in level:
                x, logdet = step(x, logdet)
            if i < len(self.levels) - 1:
                z, x = x.chunk(2, 1)
                out.append(z.flatten(1))
        out.append(x.flatten(1))
        return torch.cat(out, 1), logdet


def mel_filters(mels, bins, rate):
    def to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    def to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    points = [to_hz(to_mel(rate / 2) * i / (mels + 1)) for i in range(mels + 2)]
    freqs = torch.linspace(0, rate / 2, bins)
    bank = torch.zeros(bins, mels)
    for m in range(mels):
        lo, mid, hi = points[m], points[m + 1], points[m + 2]
        rising = (freqs - lo) / (mid - lo)
        falling = (hi - freqs) / (hi - mid)
        bank[:, m] = torch.clamp(torch.minimum(rising, falling), min=0.0)
    return bank


class KeywordSpotter(torch.nn.Module):
    def __init__(self, fft=512, hop=160, mels=40, widths=(64, 64, 128, 128), classes=12, rate=16000):
        super().__init__()
        self.fft, self.hop = fft, hop
        bins = fft // 2 + 1
        window = torch.hann_window(fft)
        angles = 2 * math.pi * torch.arange(bins, dtype=torch.float32)[:, None] * torch.arange(fft, dtype=torch.float32)[None] / fft
        self.register_buffer("dft", torch.cat([torch.cos(angles) * window, -torch.sin(angles) * window])[:, None, :])
        self.register_buffer("mel", mel_filters(mels, fft // 2 + 1, rate))
        layers, cin = [], 1
        for i, c in enumerate(widths):
            layers += [torch.nn.Conv2d(cin, c, 3, padding=1), torch.nn.BatchNorm2d(c), torch.nn.ReLU()]
            if i % 2 == 1:
                layers.append(torch.nn.MaxPool2d(2))
            cin = c
        self.cnn = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(cin, classes)

    def forward(self, wave):
        spec = F.conv1d(wave.unsqueeze(1), self.dft, stride=self.hop)
        real, imag = spec.chunk(2, 1)
        power = real * real + imag * imag
        logmel = torch.log(power.transpose(1, 2) @ self.mel + 1e-6)
        y = self.cnn(logmel.unsqueeze(1))
        return self.head(y.mean((2, 3)))


class PatchTst(torch.nn.Module):
    def __init__(self, length=512, horizon=96, patch=16, stride=8, d=128, heads=8, layers=3):
        super().__init__()
        self.patch, self.stride = patch, stride
        count = (length - patch) // stride + 1
        self.embed = torch.nn.Linear(patch, d)
        self.positions = torch.nn.Parameter(torch.randn(1, count, d) * 0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "attention": torch.nn.MultiheadAttention(d, heads, batch_first=True),
                "norm1": torch.nn.BatchNorm1d(d),
                "ffn": torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d)),
                "norm2": torch.nn.BatchNorm1d(d)}))
        self.head = torch.nn.Linear(count * d, horizon)

    def forward(self, series):
        b, channels, length = series.shape
        mean = series.mean(-1, keepdim=True)
        std = torch.sqrt(series.var(-1, keepdim=True, unbiased=False) + 1e-5)
        x = (series - mean) / std
        patches = x.unfold(2, self.patch, self.stride).reshape(b * channels, -1, self.patch)
        x = self.embed(patches) + self.positions
        for block in self.blocks:
            x = x + block["attention"](x, x, x, need_weights=False)[0]
            x = block["norm1"](x.transpose(1, 2)).transpose(1, 2)
            x = x + block["ffn"](x)
            x = block["norm2"](x.transpose(1, 2)).transpose(1, 2)
        y = self.head(x.flatten(1)).view(b, channels, -1)
        return y * std + mean


class PoolFormerBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm1 = torch.nn.GroupNorm(1, c)
        self.pool = torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.norm2 = torch.nn.GroupNorm(1, c)
        self.mlp = torch.nn.Sequential(torch.nn.Conv2d(c, 4 * c, 1), torch.nn.GELU(), torch.nn.Conv2d(4 * c, c, 1))
        self.scale1 = torch.nn.Parameter(torch.full((c, 1, 1), 0.1))
        self.scale2 = torch.nn.Parameter(torch.full((c, 1, 1), 0.1))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.scale1 * (self.pool(y) - y)
        return x + self.scale2 * self.mlp(self.norm2(x))


class PoolFormer(torch.nn.Module):
    def __init__(self, widths=(64, 128, 320, 512), depths=(2, 2, 6, 2), classes=1000):
        super().__init__()
        stages, cin = [], 3
        for i, (c, n) in enumerate(zip(widths, depths)):
            stages.append(torch.nn.Conv2d(cin, c, 7, 4, 2) if i == 0 else torch.nn.Conv2d(cin, c, 3, 2, 1))
            stages += [PoolFormerBlock(c) for _ in range(n)]
            cin = c
        self.stages = torch.nn.Sequential(*stages)
        self.norm = torch.nn.GroupNorm(1, cin)
        self.head = torch.nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.norm(self.stages(x)).mean((2, 3)))


class DcnV2(torch.nn.Module):
    def __init__(self, fields=26, vocab=10000, embed=16, dense=13, cross=3, hidden=(512, 256)):
        super().__init__()
        self.tables = torch.nn.ModuleList(torch.nn.Embedding(vocab, embed) for _ in range(fields))
        width = fields * embed + dense
        self.cross = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(cross))
        layers, cin = [], width
        for h in hidden:
            layers += [torch.nn.Linear(cin, h), torch.nn.ReLU()]
            cin = h
        self.deep = torch.nn.Sequential(*layers)
        self.out = torch.nn.Linear(width + cin, 1)

    def forward(self, ids, dense):
        x0 = torch.cat([table(ids[:, i]) for i, table in enumerate(self.tables)] + [torch.log1p(dense)], 1)
        x = x0
        for layer in self.cross:
            x = x0 * layer(x) + x
        return torch.sigmoid(self.out(torch.cat([x, self.deep(x0)], 1)))


def sine_positions(h, w, d):
    quarter = d // 4
    freqs = 1.0 / (10000 ** (torch.arange(quarter, dtype=torch.float32) / quarter))
    ys = torch.arange(h, dtype=torch.float32)[:, None] * freqs[None]
    xs = torch.arange(w, dtype=torch.float32)[:, None] * freqs[None]
    y = torch.cat([ys.sin(), ys.cos()], 1)[:, None, :].expand(h, w, 2 * quarter)
    x = torch.cat([xs.sin(), xs.cos()], 1)[None, :, :].expand(h, w, 2 * quarter)
    return torch.cat([y, x], -1).reshape(1, h * w, d)


class Detr(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256, 512), d=256, heads=8, encoders=3, decoders=3, queries=100, classes=91, size=256):
        super().__init__()
        layers, cin = [torch.nn.Conv2d(3, widths[0], 7, 2, 3), torch.nn.BatchNorm2d(widths[0]), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1)], widths[0]
        for i, c in enumerate(widths):
            stride = 1 if i == 0 else 2
            layers += [torch.nn.Conv2d(cin, c, 3, stride, 1), torch.nn.BatchNorm2d(c), torch.nn.ReLU(), torch.nn.Conv2d(c, c, 3, 1, 1), torch.nn.BatchNorm2d(c),
                       torch.nn.ReLU()]
            cin = c
        self.backbone = torch.nn.Sequential(*layers)
        self.project = torch.nn.Conv2d(cin, d, 1)
        side = size // (4 * 2 ** (len(widths) - 1))
        self.register_buffer("positions", sine_positions(side, side, d))
        self.queries = torch.nn.Parameter(torch.randn(1, queries, d))
        self.transformer = torch.nn.Transformer(d, heads, encoders, decoders, 4 * d, dropout=0.0, batch_first=True)
        self.classes = torch.nn.Linear(d, classes + 1)
        self.boxes = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, 4))

    def forward(self, image):
        memory = self.project(self.backbone(image)).flatten(2).transpose(1, 2) + self.positions
        y = self.transformer(memory, self.queries.expand(image.shape[0], -1, -1))
        return self.classes(y).softmax(-1), self.boxes(y).sigmoid()


def convmixer(small, batch_norm_statistics):
    model = ConvMixer(dim=16, depth=2, kernel=5, patch=4, classes=10) if small else ConvMixer()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def dit(small):
    model = DiT(size=8, d=32, heads=2, depth=1) if small else DiT()
    size = 8 if small else 32
    return model.eval(), (seeded(1, 4, size, size), torch.tensor([500.0])), ["latent", "timestep"], None


def glow(small):
    model = Glow(levels=2, steps=1, hidden=8) if small else Glow()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(1, 3, 64, 64),), ["input"], None


def keyword_spotter(small, batch_norm_statistics):
    model = KeywordSpotter(fft=64, hop=32, mels=8, widths=(4, 8), classes=3) if small else KeywordSpotter()
    return batch_norm_statistics(model).eval(), (seeded(1, 1024) if small else seeded(1, 16000),), ["waveform"], None


def patchtst(small, batch_norm_statistics):
    model = PatchTst(length=64, horizon=8, d=16, heads=2, layers=1) if small else PatchTst()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64) if small else seeded(1, 7, 512),), ["series"], None


def poolformer(small):
    model = PoolFormer(widths=(8, 16), depths=(1, 1), classes=10) if small else PoolFormer()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def dcn_v2(small):
    model = DcnV2(fields=3, vocab=50, embed=4, dense=2, cross=2, hidden=(16,)) if small else DcnV2()
    batch, fields, dense, vocab = (4, 3, 2, 50) if small else (256, 26, 13, 10000)
    return model.eval(), (random_ids(vocab, (batch, fields), 1), seeded(batch, dense).abs()), ["ids", "dense"], None


def detr(small, batch_norm_statistics):
    model = Detr(widths=(8, 16), d=16, heads=2, encoders=1, decoders=1, queries=5, classes=3, size=32) if small else Detr()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["image"], None
