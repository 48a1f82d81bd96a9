"""Families first run as held-out models (nobody had tuned for them), each of which had an op on
the reference kernels or a slow path; scripts/user_models.py registers them:

  style_transfer      Johnson et al.'s fast style transfer: ReflectionPad2d before every convolution,
                      InstanceNorm2d with ReLU, three residual blocks, nearest 2x upsampling, Tanh;
                      [1,3,256,256] -> [1,3,256,256]
  conv_tasnet         Conv-TasNet speech separation: a strided Conv1d encoder, GroupNorm(1), blocks of
                      1x1 Conv1d, PReLU, GroupNorm(1), dilated depthwise Conv1d; sigmoid masks and a
                      ConvTranspose1d decoder per source; [1,1,16000] -> [1,2,16000]
  dgcnn               DGCNN point-cloud classification: k-nearest neighbours from pairwise distances
                      (MatMul, TopK), neighbour features by torch.gather over an expanded tensor
                      (GatherElements), 1x1 Conv2d edge convolutions, max over neighbours; [1,3,512]
  regnet_x            torchvision's RegNetX-400MF: bottlenecks whose 3x3 convolutions are grouped
                      (16 channels a group); [1,3,224,224]
  bicubic_sr          super-resolution around a bicubic upsampling (Resize cubic) with a Mish
                      residual branch; [1,3,128,128] -> [1,3,256,256]
  gated_scan          a state-space-flavoured sequence block: LayerNorm, a gated projection, decays
                      by CumSum and Exp, SiLU gating; [1,256,128]
  capsule             a capsule network (dynamic routing): a 9x9 convolution, primary capsules by a
                      9x9 stride-2 convolution of 256 channels onto 6x6, 1152 x 10 tiny MatMuls of
                      the capsule transforms, three routing rounds (Softmax, ReduceSum, squash);
                      [2,1,28,28] -> [2,10]
  mobilevit           a MobileViT-style hybrid: strided convolution stem, blocks of a local 3x3 and 1x1
                      convolution, 2x2 patches unfolded into 4 sequences of 1024 tokens, two
                      transformer encoder layers (4 heads of width 24, GELU), folded back and fused
                      with the input by a 3x3 convolution; [1,3,256,256] -> [1,1000]
  repvgg              RepVGG-A0 in its training form: each block sums a 3x3 and a 1x1 convolution with
                      BatchNorm and an identity BatchNorm branch, then ReLU; [1,3,224,224] -> [1,1000]
  stylegan            a StyleGAN2-style generator: a mapping MLP, convolutions whose weights the style
                      modulates and demodulates at run time (their source a learned constant), bilinear
                      upsampling, noise; [1,256] -> [1,3,64,64]
  melgan              a MelGAN-style vocoder: reflection pads, weight-normalised Conv1d and
                      ConvTranspose1d upsampling x256, residual stacks of dilations 1, 3 and 9;
                      [1,80,100] -> [1,1,25600]
  convlstm            a convolutional LSTM over 8 video frames: each step one 3x3 convolution of the frame
                      and the hidden state (16 + 64 -> 256 channels) split into four gates; sigmoid and
                      tanh cells from a zero state; a 1x1 head; [1,8,16,32,32] -> [1,10,32,32]
"""
import torch
import torch.nn.functional as F
import torchvision

from seeded_inputs import seeded


def _conv_norm_relu(c_in, c_out, kernel, stride=1):
    return torch.nn.Sequential(torch.nn.ReflectionPad2d(kernel // 2), torch.nn.Conv2d(c_in, c_out, kernel, stride),
                               torch.nn.InstanceNorm2d(c_out, affine=True), torch.nn.ReLU())


class StyleTransfer(torch.nn.Module):
    def __init__(self, width=32, blocks=3):
        super().__init__()
        w = width
        self.down = torch.nn.Sequential(_conv_norm_relu(3, w, 9), _conv_norm_relu(w, 2 * w, 3, 2), _conv_norm_relu(2 * w, 4 * w, 3, 2))
        self.res = torch.nn.ModuleList([
            torch.nn.Sequential(_conv_norm_relu(4 * w, 4 * w, 3), torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(4 * w, 4 * w, 3),
                                torch.nn.InstanceNorm2d(4 * w, affine=True)) for _ in range(blocks)])
        self.up = torch.nn.Sequential(torch.nn.Upsample(scale_factor=2, mode="nearest"), _conv_norm_relu(4 * w, 2 * w, 3),
                                      torch.nn.Upsample(scale_factor=2, mode="nearest"), _conv_norm_relu(2 * w, w, 3))
        self.out = torch.nn.Sequential(torch.nn.ReflectionPad2d(4), torch.nn.Conv2d(w, 3, 9))

    def forward(self, x):
        y = self.down(x)
        for block in self.res:
            y = y + block(y)
        return torch.tanh(self.out(self.up(y)))


class TasBlock(torch.nn.Module):
    def __init__(self, channels, hidden, dilation):
        super().__init__()
        self.expand = torch.nn.Conv1d(channels, hidden, 1)
        self.act1, self.norm1 = torch.nn.PReLU(), torch.nn.GroupNorm(1, hidden)
        self.depthwise = torch.nn.Conv1d(hidden, hidden, 3, padding=dilation, dilation=dilation, groups=hidden)
        self.act2, self.norm2 = torch.nn.PReLU(), torch.nn.GroupNorm(1, hidden)
        self.project = torch.nn.Conv1d(hidden, channels, 1)

    def forward(self, x):
        return x + self.project(self.norm2(self.act2(self.depthwise(self.norm1(self.act1(self.expand(x)))))))


class ConvTasNet(torch.nn.Module):
    def __init__(self, basis=128, channels=64, hidden=128, repeats=2, depth=6, sources=2):
        super().__init__()
        self.sources = sources
        self.encoder = torch.nn.Conv1d(1, basis, 16, 8, bias=False)
        self.norm = torch.nn.GroupNorm(1, basis)
        self.bottleneck = torch.nn.Conv1d(basis, channels, 1)
        self.blocks = torch.nn.Sequential(*[TasBlock(channels, hidden, 2 ** i) for _ in range(repeats) for i in range(depth)])
        self.mask = torch.nn.Conv1d(channels, sources * basis, 1)
        self.decoder = torch.nn.ConvTranspose1d(basis, 1, 16, 8, bias=False)

    def forward(self, x):
        w = F.relu(self.encoder(x))
        m = torch.sigmoid(self.mask(self.blocks(self.bottleneck(self.norm(w))))).view(1, self.sources, w.shape[1], -1)
        return torch.cat([self.decoder(w * m[:, i]) for i in range(self.sources)], 1)


class Dgcnn(torch.nn.Module):
    def __init__(self, k=16, width=64, classes=10):
        super().__init__()
        self.k = k
        self.edge1 = torch.nn.Sequential(torch.nn.Conv2d(6, width, 1, bias=False), torch.nn.BatchNorm2d(width), torch.nn.LeakyReLU(0.2))
        self.edge2 = torch.nn.Sequential(torch.nn.Conv2d(2 * width, width, 1, bias=False), torch.nn.BatchNorm2d(width), torch.nn.LeakyReLU(0.2))
        self.head = torch.nn.Sequential(torch.nn.Linear(2 * width, width), torch.nn.ReLU(), torch.nn.Linear(width, classes))

    def edges(self, x):  # x [B,C,N] -> [B,2C,N,k]: each point's k nearest neighbours less it, and it
        inner = -2 * torch.matmul(x.transpose(2, 1), x)
        squares = (x ** 2).sum(1, keepdim=True)
        nearest = (-squares - inner - squares.transpose(2, 1)).topk(k=self.k, dim=-1)[1]
        b, c, n = x.shape
        points = x.transpose(2, 1)
        neighbours = torch.gather(points.unsqueeze(1).expand(b, n, n, c), 2, nearest.unsqueeze(-1).expand(b, n, self.k, c))
        centres = points.unsqueeze(2).expand(b, n, self.k, c)
        return torch.cat([neighbours - centres, centres], 3).permute(0, 3, 1, 2)

    def forward(self, x):
        a = self.edge1(self.edges(x)).max(-1)[0]
        b = self.edge2(self.edges(a)).max(-1)[0]
        return self.head(torch.cat([a, b], 1).max(-1)[0])


class BicubicSr(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.residual = torch.nn.Sequential(torch.nn.Conv2d(3, width, 3, padding=1), torch.nn.Mish(), torch.nn.Conv2d(width, 3, 3, padding=1))

    def forward(self, x):
        up = F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False)
        return up + self.residual(up)


class GatedScanBlock(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm, self.inp, self.step, self.out = torch.nn.LayerNorm(d), torch.nn.Linear(d, 2 * d), torch.nn.Linear(d, d), torch.nn.Linear(d, d)

    def forward(self, x):
        h, gate = self.inp(self.norm(x)).chunk(2, -1)
        decay = torch.cumsum(-F.softplus(self.step(h)), 1)
        state = torch.cumsum(torch.exp(-decay) * h, 1) * torch.exp(decay)
        return x + self.out(state * F.silu(gate))


class GatedScan(torch.nn.Module):
    def __init__(self, d=128, blocks=4):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[GatedScanBlock(d) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


class Capsule(torch.nn.Module):
    def __init__(self, channels=256, types=32, classes=10):
        super().__init__()
        self.types = types
        self.conv = torch.nn.Conv2d(1, channels, 9)
        self.primary = torch.nn.Conv2d(channels, types * 8, 9, 2)
        self.transforms = torch.nn.Parameter(0.01 * seeded(1, types * 36, classes, 16, 8))

    @staticmethod
    def squash(v):
        n = (v ** 2).sum(-1, keepdim=True)
        return n / (1 + n) * v / torch.sqrt(n + 1e-8)

    def forward(self, x):
        b = x.shape[0]
        u = self.primary(F.relu(self.conv(x))).view(b, self.types, 8, 36).permute(0, 1, 3, 2).reshape(b, self.types * 36, 8)
        u = self.squash(u)
        predictions = (self.transforms @ u[:, :, None, :, None]).squeeze(-1)  # [b, capsules, classes, 16]
        logits = torch.zeros(b, self.types * 36, self.transforms.shape[2])
        for _ in range(3):
            coupling = torch.softmax(logits, 2)
            v = self.squash((coupling[..., None] * predictions).sum(1))
            logits = logits + (predictions * v[:, None]).sum(-1)
        return v.norm(dim=-1)


class MobileVitBlock(torch.nn.Module):
    def __init__(self, channels=64, width=96, patch=2, layers=2):
        super().__init__()
        self.patch = patch
        self.local = torch.nn.Sequential(torch.nn.Conv2d(channels, channels, 3, padding=1), torch.nn.SiLU(), torch.nn.Conv2d(channels, width, 1))
        layer = torch.nn.TransformerEncoderLayer(width, 4, 2 * width, 0.0, batch_first=True, activation="gelu")
        self.transformer = torch.nn.TransformerEncoder(layer, layers)
        self.project = torch.nn.Conv2d(width, channels, 1)
        self.fuse = torch.nn.Conv2d(2 * channels, channels, 3, padding=1)

    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.patch
        # Each of the p x p pixel offsets a sequence of (h/p)(w/p) tokens.
        tokens = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, (h // p) * (w // p), d)
        tokens = self.transformer(tokens)
        y = tokens.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.project(y)], 1))


class MobileVit(torch.nn.Module):
    def __init__(self, channels=64, width=96, classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, 2, 1), torch.nn.SiLU(), torch.nn.Conv2d(32, channels, 3, 2, 1), torch.nn.SiLU())
        self.block1 = MobileVitBlock(channels, width)
        self.down = torch.nn.Conv2d(channels, channels, 3, 2, 1)
        self.block2 = MobileVitBlock(channels, width)
        self.head = torch.nn.Linear(channels, classes)

    def forward(self, x):
        return self.head(self.block2(self.down(self.block1(self.stem(x)))).mean((2, 3)))


class RepVggBlock(torch.nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.dense = torch.nn.Sequential(torch.nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(c_out))
        self.pointwise = torch.nn.Sequential(torch.nn.Conv2d(c_in, c_out, 1, stride, bias=False), torch.nn.BatchNorm2d(c_out))
        self.identity = torch.nn.BatchNorm2d(c_out) if c_in == c_out and stride == 1 else None

    def forward(self, x):
        return F.relu(self.dense(x) + self.pointwise(x) + (self.identity(x) if self.identity is not None else 0))


class RepVgg(torch.nn.Module):
    def __init__(self, widths=(48, 48, 96, 192, 1280), depths=(1, 2, 4, 14, 1), classes=1000):
        super().__init__()
        blocks, c = [], 3
        for width, depth in zip(widths, depths):
            for i in range(depth):
                blocks.append(RepVggBlock(c, width, 2 if i == 0 else 1))
                c = width
        self.features = torch.nn.Sequential(*blocks)
        self.head = torch.nn.Linear(c, classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class ModulatedConv(torch.nn.Module):
    def __init__(self, c_in, c_out, style, upsample=False):
        super().__init__()
        self.weight = torch.nn.Parameter(seeded(c_out, c_in, 3, 3))
        self.affine = torch.nn.Linear(style, c_in)
        self.upsample = upsample
        self.noise = torch.nn.Parameter(torch.full((1,), 0.05))

    def forward(self, x, w):
        weight = self.weight * self.affine(w)[0][None, :, None, None]
        weight = weight * torch.rsqrt((weight * weight).sum((1, 2, 3), keepdim=True) + 1e-8)
        if self.upsample:
            x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
        y = F.conv2d(x, weight, padding=1)
        return F.leaky_relu(y + self.noise * torch.ones_like(y[:, :1]), 0.2)


class StyleGan(torch.nn.Module):
    def __init__(self, style=256, widths=(256, 128, 128, 64, 64, 32, 32)):
        super().__init__()
        self.mapping = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(style, style), torch.nn.LeakyReLU(0.2))])
        self.constant = torch.nn.Parameter(seeded(1, widths[0], 4, 4))
        ups = (False, True, False, True, False, True, True)
        self.convs = torch.nn.ModuleList([ModulatedConv(c_in, c_out, style, up) for c_in, c_out, up in zip((widths[0],) + widths[:-1], widths, ups)])
        self.rgb = torch.nn.Conv2d(widths[-1], 3, 1)

    def forward(self, z):
        w = self.mapping(F.normalize(z, dim=1))
        x = self.constant
        for conv in self.convs:
            x = conv(x, w)
        return torch.tanh(self.rgb(x))


class MelResidualStack(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        wn = torch.nn.utils.weight_norm
        self.branches = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.LeakyReLU(0.2), torch.nn.ReflectionPad1d(d), wn(torch.nn.Conv1d(c, c, 3, dilation=d)),
                                                                 torch.nn.LeakyReLU(0.2), wn(torch.nn.Conv1d(c, c, 1))) for d in (1, 3, 9)])

    def forward(self, x):
        for branch in self.branches:
            x = x + branch(x)
        return x


class MelGan(torch.nn.Module):
    def __init__(self, c=256, mels=80):
        super().__init__()
        wn = torch.nn.utils.weight_norm
        layers = [torch.nn.ReflectionPad1d(3), wn(torch.nn.Conv1d(mels, c, 7))]
        for r in (8, 8, 2, 2):
            layers += [torch.nn.LeakyReLU(0.2), wn(torch.nn.ConvTranspose1d(c, c // 2, 2 * r, r, r // 2 + r % 2, r % 2)), MelResidualStack(c // 2)]
            c //= 2
        layers += [torch.nn.LeakyReLU(0.2), torch.nn.ReflectionPad1d(3), wn(torch.nn.Conv1d(c, 1, 7)), torch.nn.Tanh()]
        self.net = torch.nn.Sequential(*layers)

    def forward(self, mel):
        return self.net(mel)


class ConvLstm(torch.nn.Module):
    def __init__(self, c_in=16, hidden=64, steps=8, classes=10):
        super().__init__()
        self.hidden, self.steps = hidden, steps
        self.gates = torch.nn.Conv2d(c_in + hidden, 4 * hidden, 3, padding=1)
        self.head = torch.nn.Conv2d(hidden, classes, 1)

    def forward(self, frames):  # [N, T, C, H, W]
        n, _, _, height, width = frames.shape
        h = torch.zeros(n, self.hidden, height, width)
        c = torch.zeros(n, self.hidden, height, width)
        for t in range(self.steps):
            i, f, o, g = torch.split(self.gates(torch.cat([frames[:, t], h], 1)), self.hidden, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return self.head(h)


def style_transfer(small):
    model = StyleTransfer(width=8, blocks=1) if small else StyleTransfer()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["input"], None


def conv_tasnet(small):
    model = ConvTasNet(basis=16, channels=8, hidden=16, repeats=1, depth=3) if small else ConvTasNet()
    return model.eval(), (seeded(1, 1, 800) if small else seeded(1, 1, 16000),), ["input"], None


def dgcnn(small, batch_norm_statistics):
    model = Dgcnn(k=4, width=8) if small else Dgcnn()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64) if small else seeded(1, 3, 512),), ["input"], None


def regnet_x(small, batch_norm_statistics):
    model = torchvision.models.regnet_x_400mf()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64, 64) if small else seeded(1, 3, 224, 224),), ["input"], None


def bicubic_sr(small):
    model = BicubicSr(width=8) if small else BicubicSr()
    return model.eval(), (seeded(1, 3, 16, 16) if small else seeded(1, 3, 128, 128),), ["input"], None


def gated_scan(small):
    model = GatedScan(d=16, blocks=1) if small else GatedScan()
    return model.eval(), (seeded(1, 32, 16) if small else seeded(1, 256, 128),), ["input"], None


def capsule(small):
    model = Capsule(channels=32, types=4) if small else Capsule()
    return model.eval(), (seeded(2, 1, 28, 28),), ["input"], None


def mobilevit(small):
    model = MobileVit(channels=16, width=24, classes=10) if small else MobileVit()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["input"], None


def repvgg(small, batch_norm_statistics):
    model = RepVgg(widths=(8, 8, 16, 16, 32), depths=(1, 2, 2, 2, 1), classes=10) if small else RepVgg()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def stylegan(small):
    model = StyleGan(style=32, widths=(32, 16, 16, 8)) if small else StyleGan()
    return model.eval(), (seeded(1, 32) if small else seeded(1, 256),), ["input"], None


def melgan(small):
    model = MelGan(c=32, mels=16) if small else MelGan()
    return model.eval(), (seeded(1, 16, 8) if small else seeded(1, 80, 100),), ["input"], None


def convlstm(small):
    model = ConvLstm(c_in=4, hidden=8, steps=3, classes=4) if small else ConvLstm()
    return model.eval(), (seeded(1, 3, 4, 8, 8) if small else seeded(1, 8, 16, 32, 32),), ["input"], None
