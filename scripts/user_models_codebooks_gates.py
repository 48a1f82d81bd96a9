"""Ten families first run as held-out models (the eleventh batch); scripts/user_models.py registers
them:

  vqvae               a VQ-VAE: a strided conv encoder, each position's nearest codebook vector
                      (squared distances by MatMul, ArgMin, Gather), a ConvTranspose decoder;
                      [1,3,128,128] -> [1,3,128,128]
  ghostnet            GhostNet: ghost modules (a 1x1 convolution and a cheap depthwise one,
                      concatenated), hard-sigmoid squeeze-excitation, depthwise shortcuts;
                      [1,3,224,224] -> [1,1000]
  hourglass           two stacked hourglasses for pose (max pooling down, nearest upsampling, residual
                      adds), heatmaps and a soft-argmax over them; [1,3,256,256] -> [1,16,2]
  quartznet           a QuartzNet-style speech encoder: depthwise separable Conv1d of widths 33-87 with
                      BatchNorm and ReLU, residual 1x1s, CTC log-probabilities; [1,64,400] -> [1,29,200]
  alibi_encoder       a causal transformer with ALiBi biases (a constant per head added to the
                      scores), pre-norm, a GLU feed-forward; [1,256,256]
  retnet              RetNet-style retention: (Q K^T * a decay mask) V per head, GroupNorm over the
                      heads' features, a SiLU gate; [1,256,256]
  attention_unet      a UNet with attention gates on its skips (1x1 convolutions, Sigmoid, bilinear
                      resize with align_corners); [1,3,128,128] -> [1,2,128,128]
  srresnet            SRResNet: PReLU residual blocks, two PixelShuffle x2 upsamplings, 9x9 head and
                      tail; [1,3,64,64] -> [1,3,256,256]
  convseq             a ConvS2S-style encoder: embeddings and positions, Conv1d + GLU residual blocks,
                      attention pooling; [1,200] ids -> [1,20]
  siamese             twin CNN towers with shared weights, L2-normalised embeddings, their cosine
                      similarities; two [8,3,96,96] -> [8,8]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class VqVae(torch.nn.Module):
    def __init__(self, c=128, codes=512, d=64):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Conv2d(3, c, 4, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(c, c, 4, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(c, d, 1))
        self.codebook = torch.nn.Parameter(torch.randn(codes, d))
        self.decoder = torch.nn.Sequential(torch.nn.Conv2d(d, c, 3, 1, 1), torch.nn.ReLU(), torch.nn.ConvTranspose2d(c, c, 4, 2, 1), torch.nn.ReLU(),
                                           torch.nn.ConvTranspose2d(c, 3, 4, 2, 1))

    def forward(self, x):
        z = self.encoder(x)
        b, d, h, w = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, d)
        distances = (flat * flat).sum(1, keepdim=True) - 2 * flat @ self.codebook.t() + (self.codebook * self.codebook).sum(1)
        quantized = self.codebook[distances.argmin(1)].view(b, h, w, d).permute(0, 3, 1, 2)
        return self.decoder(quantized)


class Ghost(torch.nn.Module):
    def __init__(self, cin, cout, relu=True):
        super().__init__()
        half = cout // 2
        act = torch.nn.ReLU if relu else torch.nn.Identity
        self.primary = torch.nn.Sequential(torch.nn.Conv2d(cin, half, 1, bias=False), torch.nn.BatchNorm2d(half), act())
        self.cheap = torch.nn.Sequential(torch.nn.Conv2d(half, half, 3, 1, 1, groups=half, bias=False), torch.nn.BatchNorm2d(half), act())

    def forward(self, x):
        y = self.primary(x)
        return torch.cat([y, self.cheap(y)], 1)


class GhostBottleneck(torch.nn.Module):
    def __init__(self, cin, mid, cout, stride, se):
        super().__init__()
        self.expand = Ghost(cin, mid)
        self.down = torch.nn.Sequential(torch.nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), torch.nn.BatchNorm2d(mid)) if stride > 1 else torch.nn.Identity()
        self.se = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(mid, mid // 4, 1), torch.nn.ReLU(), torch.nn.Conv2d(mid // 4, mid, 1),
                                      torch.nn.Hardsigmoid()) if se else None
        self.project = Ghost(mid, cout, relu=False)
        self.shortcut = torch.nn.Identity() if stride == 1 and cin == cout else torch.nn.Sequential(
            torch.nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), torch.nn.BatchNorm2d(cin), torch.nn.Conv2d(cin, cout, 1, bias=False), torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.down(self.expand(x))
        if self.se is not None:
            y = y * self.se(y)
        return self.project(y) + self.shortcut(x)


class GhostNet(torch.nn.Module):
    STAGES = [(16, 16, 16, 1, 0), (16, 48, 24, 2, 0), (24, 72, 24, 1, 0), (24, 72, 40, 2, 1), (40, 120, 40, 1, 1), (40, 240, 80, 2, 0), (80, 200, 80, 1, 0),
              (80, 480, 112, 1, 1), (112, 672, 160, 2, 1), (160, 960, 160, 1, 1)]

    def __init__(self, stages=STAGES, classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU())
        self.blocks = torch.nn.Sequential(*[GhostBottleneck(*s) for s in stages])
        last = stages[-1][2]
        self.head = torch.nn.Sequential(torch.nn.Conv2d(last, 960, 1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(960, 1280, 1), torch.nn.ReLU(),
                                        torch.nn.Flatten(), torch.nn.Linear(1280, classes))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class Residual(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.BatchNorm2d(c), torch.nn.ReLU(), torch.nn.Conv2d(c, c // 2, 1), torch.nn.BatchNorm2d(c // 2), torch.nn.ReLU(),
                                        torch.nn.Conv2d(c // 2, c // 2, 3, 1, 1), torch.nn.BatchNorm2d(c // 2), torch.nn.ReLU(), torch.nn.Conv2d(c // 2, c, 1))

    def forward(self, x):
        return x + self.body(x)


class Hourglass(torch.nn.Module):
    def __init__(self, c, depth):
        super().__init__()
        self.skip, self.down = Residual(c), Residual(c)
        self.inner = Hourglass(c, depth - 1) if depth > 1 else Residual(c)
        self.up = Residual(c)

    def forward(self, x):
        low = self.up(self.inner(self.down(F.max_pool2d(x, 2))))
        return self.skip(x) + F.interpolate(low, scale_factor=2, mode="nearest")


class PoseHourglass(torch.nn.Module):
    def __init__(self, c=128, joints=16, stacks=2, depth=4):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 7, 2, 3), torch.nn.BatchNorm2d(64), torch.nn.ReLU(), torch.nn.Conv2d(64, c, 1), torch.nn.MaxPool2d(2))
        self.hourglasses = torch.nn.ModuleList([Hourglass(c, depth) for _ in range(stacks)])
        self.heads = torch.nn.ModuleList([torch.nn.Conv2d(c, joints, 1) for _ in range(stacks)])
        self.remaps = torch.nn.ModuleList([torch.nn.Conv2d(joints, c, 1) for _ in range(stacks - 1)])

    def forward(self, x):
        x = self.stem(x)
        for i, hourglass in enumerate(self.hourglasses):
            y = hourglass(x)
            heat = self.heads[i](y)
            if i < len(self.remaps):
                x = x + y + self.remaps[i](heat)
        b, j, h, w = heat.shape
        p = heat.flatten(2).softmax(-1).view(b, j, h, w)
        return torch.stack([(p.sum(2) * torch.linspace(0, 1, w)).sum(-1), (p.sum(3) * torch.linspace(0, 1, h)).sum(-1)], -1)


class QuartzBlock(torch.nn.Module):
    def __init__(self, cin, cout, k, repeat=3):
        super().__init__()
        layers = []
        for r in range(repeat):
            c = cin if r == 0 else cout
            layers += [torch.nn.Conv1d(c, c, k, padding=k // 2, groups=c, bias=False), torch.nn.Conv1d(c, cout, 1, bias=False), torch.nn.BatchNorm1d(cout)]
            if r < repeat - 1:
                layers.append(torch.nn.ReLU())
        self.body = torch.nn.Sequential(*layers)
        self.residual = torch.nn.Sequential(torch.nn.Conv1d(cin, cout, 1, bias=False), torch.nn.BatchNorm1d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.residual(x))


class QuartzNet(torch.nn.Module):
    def __init__(self, mels=64, width=256, blocks=((256, 33), (256, 39), (512, 51), (512, 63), (512, 75)), vocab=29):
        super().__init__()
        self.prolog = torch.nn.Sequential(torch.nn.Conv1d(mels, mels, 33, 2, 16, groups=mels, bias=False), torch.nn.Conv1d(mels, width, 1, bias=False),
                                          torch.nn.BatchNorm1d(width), torch.nn.ReLU())
        cins = [width] + [c for c, _ in blocks[:-1]]
        self.blocks = torch.nn.Sequential(*[QuartzBlock(cin, cout, k) for cin, (cout, k) in zip(cins, blocks)])
        c = blocks[-1][0]
        self.epilog = torch.nn.Sequential(torch.nn.Conv1d(c, c, 87, padding=86, dilation=2, groups=c, bias=False), torch.nn.Conv1d(c, c, 1, bias=False),
                                          torch.nn.BatchNorm1d(c), torch.nn.ReLU(), torch.nn.Conv1d(c, 2 * c, 1), torch.nn.ReLU(), torch.nn.Conv1d(2 * c, vocab, 1))

    def forward(self, x):
        return self.epilog(self.blocks(self.prolog(x))).log_softmax(1)


class AlibiEncoder(torch.nn.Module):
    def __init__(self, d=256, heads=8, layers=4, tokens=256):
        super().__init__()
        self.heads = heads
        slopes = torch.tensor([2 ** (-8 * (i + 1) / heads) for i in range(heads)])
        position = torch.arange(tokens)
        distance = -(position[None, :] - position[:, None]).abs().float()
        causal = torch.triu(torch.full((tokens, tokens), float("-inf")), 1)
        self.register_buffer("bias", slopes[:, None, None] * distance[None] + causal[None])
        self.norm1 = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.norm2 = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])
        self.up = torch.nn.ModuleList([torch.nn.Linear(d, 4 * d) for _ in range(layers)])
        self.down = torch.nn.ModuleList([torch.nn.Linear(2 * d, d) for _ in range(layers)])

    def forward(self, x):
        b, n, d = x.shape
        for norm1, norm2, qkv, out, up, down in zip(self.norm1, self.norm2, self.qkv, self.out, self.up, self.down):
            q, k, v = qkv(norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            attention = (q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + self.bias).softmax(-1)
            x = x + out((attention @ v).transpose(1, 2).reshape(b, n, d))
            x = x + down(F.glu(up(norm2(x)), -1))
        return x


class RetNet(torch.nn.Module):
    def __init__(self, d=256, heads=4, layers=3, tokens=256):
        super().__init__()
        self.heads = heads
        gammas = 1 - 2.0 ** (-5 - torch.arange(heads).float())
        position = torch.arange(tokens).float()
        distance = position[:, None] - position[None, :]
        self.register_buffer("decay", torch.where(distance >= 0, gammas[:, None, None] ** distance.clamp(min=0)[None], torch.zeros(1)))
        self.qkvg = torch.nn.ModuleList([torch.nn.Linear(d, 4 * d, bias=False) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d, bias=False) for _ in range(layers)])
        self.group_norms = torch.nn.ModuleList([torch.nn.GroupNorm(heads, d) for _ in range(layers)])
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.ffn = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d))
                                        for _ in range(layers)])

    def forward(self, x):
        b, n, d = x.shape
        for qkvg, out, group_norm, norm, ffn in zip(self.qkvg, self.out, self.group_norms, self.norms, self.ffn):
            q, k, v, gate = qkvg(norm(x)).chunk(4, -1)
            q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
            retained = ((q @ k.transpose(-1, -2)) * self.decay) @ v
            retained = group_norm(retained.transpose(1, 2).reshape(b * n, d, 1)).view(b, n, d)  # GroupNorm over each token's heads
            x = x + out(F.silu(gate) * retained)
            x = x + ffn(x)
        return x


class AttentionGate(torch.nn.Module):
    def __init__(self, c_gate, c_skip, c_inner):
        super().__init__()
        self.gate = torch.nn.Conv2d(c_gate, c_inner, 1)
        self.skip = torch.nn.Conv2d(c_skip, c_inner, 1, 2)
        self.psi = torch.nn.Conv2d(c_inner, 1, 1)

    def forward(self, g, x):
        a = torch.sigmoid(self.psi(F.relu(self.gate(g) + self.skip(x))))
        return x * F.interpolate(a, size=x.shape[2:], mode="bilinear", align_corners=True)


def double_conv(cin, cout):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, 1, 1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU(), torch.nn.Conv2d(cout, cout, 3, 1, 1),
                               torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


class AttentionUNet(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=2):
        super().__init__()
        c = widths
        self.downs = torch.nn.ModuleList([double_conv(3 if i == 0 else c[i - 1], c[i]) for i in range(len(c))])
        self.gates = torch.nn.ModuleList([AttentionGate(c[i + 1], c[i], max(1, c[i] // 2)) for i in reversed(range(len(c) - 1))])
        self.ups = torch.nn.ModuleList([double_conv(c[i + 1] + c[i], c[i]) for i in reversed(range(len(c) - 1))])
        self.out = torch.nn.Conv2d(c[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.downs):
            x = down(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for gate, up in zip(self.gates, self.ups):
            skip = skips.pop()
            x = up(torch.cat([gate(x, skip), F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)], 1))
        return self.out(x)


class SrResNet(torch.nn.Module):
    def __init__(self, c=64, blocks=8):
        super().__init__()
        self.head = torch.nn.Sequential(torch.nn.Conv2d(3, c, 9, 1, 4), torch.nn.PReLU())
        self.blocks = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, 1, 1), torch.nn.BatchNorm2d(c), torch.nn.PReLU(), torch.nn.Conv2d(c, c, 3, 1, 1),
                                                               torch.nn.BatchNorm2d(c)) for _ in range(blocks)])
        self.mid = torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, 1, 1), torch.nn.BatchNorm2d(c))
        self.up = torch.nn.Sequential(torch.nn.Conv2d(c, 4 * c, 3, 1, 1), torch.nn.PixelShuffle(2), torch.nn.PReLU(), torch.nn.Conv2d(c, 4 * c, 3, 1, 1),
                                      torch.nn.PixelShuffle(2), torch.nn.PReLU(), torch.nn.Conv2d(c, 3, 9, 1, 4))

    def forward(self, x):
        h = self.head(x)
        y = h
        for block in self.blocks:
            y = y + block(y)
        return torch.tanh(self.up(h + self.mid(y)))


class ConvSeq(torch.nn.Module):
    def __init__(self, vocab=8000, d=256, layers=6, k=5, classes=20, positions=512):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Parameter(torch.randn(1, positions, d) * 0.02)
        self.convs = torch.nn.ModuleList([torch.nn.Conv1d(d, 2 * d, k, padding=k // 2) for _ in range(layers)])
        self.attention = torch.nn.Linear(d, 1)
        self.fc = torch.nn.Linear(d, classes)

    def forward(self, tokens):
        h = (self.embed(tokens) + self.positions[:, :tokens.shape[1]]).transpose(1, 2)
        for conv in self.convs:
            h = (h + F.glu(conv(h), 1)) * math.sqrt(0.5)
        h = h.transpose(1, 2)
        weights = self.attention(h).softmax(1)
        return self.fc((weights * h).sum(1))


class Siamese(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128), embedding=128):
        super().__init__()
        layers, cin = [], 3
        for c in widths:
            layers += [torch.nn.Conv2d(cin, c, 3, 2, 1), torch.nn.BatchNorm2d(c), torch.nn.ReLU()]
            cin = c
        self.tower = torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(cin, embedding))

    def forward(self, a, b):
        return F.normalize(self.tower(a), dim=1) @ F.normalize(self.tower(b), dim=1).t()


def vqvae(small):
    model = VqVae(c=8, codes=16, d=4) if small else VqVae()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(1, 3, 128, 128),), ["input"], None


def ghostnet(small, batch_norm_statistics):
    model = GhostNet(stages=[(16, 16, 16, 1, 0), (16, 32, 24, 2, 1)], classes=10) if small else GhostNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def hourglass(small, batch_norm_statistics):
    model = PoseHourglass(c=8, joints=4, stacks=2, depth=2) if small else PoseHourglass()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64, 64) if small else seeded(1, 3, 256, 256),), ["input"], None


def quartznet(small, batch_norm_statistics):
    model = QuartzNet(mels=8, width=16, blocks=((16, 5), (32, 7)), vocab=5) if small else QuartzNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 8, 40) if small else seeded(1, 64, 400),), ["input"], None


def alibi_encoder(small):
    model = AlibiEncoder(d=16, heads=2, layers=1, tokens=12) if small else AlibiEncoder()
    return model.eval(), (seeded(1, 12, 16) if small else seeded(1, 256, 256),), ["input"], None


def retnet(small):
    model = RetNet(d=16, heads=2, layers=1, tokens=12) if small else RetNet()
    return model.eval(), (seeded(1, 12, 16) if small else seeded(1, 256, 256),), ["input"], None


def attention_unet(small, batch_norm_statistics):
    model = AttentionUNet(widths=(4, 8, 16)) if small else AttentionUNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 128, 128),), ["input"], None


def srresnet(small, batch_norm_statistics):
    model = SrResNet(c=8, blocks=1) if small else SrResNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 8, 8) if small else seeded(1, 3, 64, 64),), ["input"], None


def convseq(small):
    model = ConvSeq(vocab=50, d=8, layers=2, positions=32) if small else ConvSeq()
    return model.eval(), (random_ids(50, (1, 20), 1) if small else random_ids(8000, (1, 200), 1),), ["tokens"], None


def siamese(small, batch_norm_statistics):
    model = Siamese(widths=(4, 8), embedding=8) if small else Siamese()
    batch = 2 if small else 8
    size = 16 if small else 96
    return batch_norm_statistics(model).eval(), (seeded(batch, 3, size, size), seeded(batch, 3, size, size) * 0.5), ["left", "right"], None
