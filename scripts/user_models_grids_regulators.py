"""Eight families first run as held-out models (the fifteenth batch); scripts/user_models.py registers
them:

  stn                 a spatial transformer network: a localization CNN regresses an affine map per
                      image, its sampling grid made by a MatMul with a constant base grid, the image
                      resampled by GridSample (bilinear, zero padding), then a small classifier CNN;
                      batch 4 x [3,128,128] -> [4,10]
  sinkhorn            SuperGlue-style matching: keypoint descriptors projected, a score matrix with a
                      learned dustbin row and column (Concat), 20 log-space Sinkhorn iterations
                      (ReduceLogSumExp over rows and columns), the assignment's best match per row;
                      two [1,512,256] descriptor sets -> [1,513,513] and [1,512]
  convnext_v2         ConvNeXt-V2 (atto): depthwise 7x7 convolutions, LayerNorm channels-last,
                      pointwise MLPs with GELU and global response normalization (an L2 norm over the
                      plane, ReduceL2, divided by its mean over the channels); [1,3,224,224] -> [1,1000]
  nafnet              NAFNet image restoration: LayerNorm over the channels of NCHW maps (ReduceMean
                      on axis 1), SimpleGate (halves multiplied), simplified channel attention, strided
                      convolutions down and PixelShuffle up, residuals scaled by learned factors;
                      [1,3,256,256] -> [1,3,256,256]
  fastspeech          a FastSpeech-style acoustic model: FFT blocks (self-attention, a Conv1d FFN),
                      a duration predictor, the length regulator with a fixed frame budget (durations
                      rounded from exp, CumSum, a comparison count per frame, Gather, a frame mask),
                      FFT blocks over frames and a mel projection; ids [1,64] -> [1,400,80]
  pointnet2           PointNet++ classification: farthest point sampling unrolled (ArgMax, Gather and
                      a running Min per sampled point), ball queries as the nearest 16 by TopK with
                      points beyond the radius replaced by the first, grouped 1x1 convolutions and
                      max pools over each group; [1,1024,3] -> [1,40]
  slowfast            SlowFast video recognition: a slow pathway over every fourth frame (a Slice of
                      step 4) and a fast one over all 16 with an eighth of the channels, lateral
                      time-strided Conv3d (kernel 5x1x1, stride 4x1x1) joined by Concat, 3-D residual
                      blocks, pooled heads concatenated; [1,3,16,112,112] -> [1,400]
  u2net               U^2-Net (small): nested residual U-blocks with dilated 3x3 convolutions at their
                      bottom, ceil-mode max pools, bilinear upsampling to each skip's size, six side
                      outputs fused by a 1x1 convolution and sigmoids; [1,3,256,256] -> 7 x [1,1,256,256]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class SpatialTransformer(torch.nn.Module):
    def __init__(self, size=128, channels=3, classes=10):
        super().__init__()
        self.size = size
        pooled = 4 if size >= 64 else 1  # the localization's map is size / 16 on a side
        self.localization = torch.nn.Sequential(torch.nn.Conv2d(channels, 8, 7, 2, 3), torch.nn.MaxPool2d(2), torch.nn.ReLU(),
                                                torch.nn.Conv2d(8, 10, 5, 2, 2), torch.nn.MaxPool2d(2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(pooled))
        self.regressor = torch.nn.Sequential(torch.nn.Linear(10 * pooled * pooled, 32), torch.nn.ReLU(), torch.nn.Linear(32, 6))
        with torch.no_grad():  # near the identity map, as the model is trained from
            self.regressor[2].weight.mul_(0.05)
            self.regressor[2].bias.copy_(torch.tensor([0.9, 0.1, 0.05, -0.1, 0.9, -0.05]))
        line = (torch.arange(size, dtype=torch.float32) * 2 + 1) / size - 1  # align_corners=False centres
        ys, xs = torch.meshgrid(line, line, indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys, torch.ones_like(xs)], -1).reshape(1, size * size, 3))
        self.classifier = torch.nn.Sequential(torch.nn.Conv2d(channels, 16, 3, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(16, 32, 3, 2, 1), torch.nn.ReLU(),
                                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, classes))

    def forward(self, images):
        batch = images.shape[0]
        theta = self.regressor(self.localization(images).flatten(1)).reshape(batch, 2, 3)
        grid = (self.base @ theta.transpose(1, 2)).reshape(batch, self.size, self.size, 2)
        warped = F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        return self.classifier(warped)


class SinkhornMatcher(torch.nn.Module):
    def __init__(self, width=256, iterations=20):
        super().__init__()
        self.iterations = iterations
        self.project = torch.nn.Linear(width, width)
        self.dustbin = torch.nn.Parameter(torch.tensor(1.0))
        self.scale = 1 / math.sqrt(width)

    def forward(self, first, second):
        a, b = self.project(first), self.project(second)
        scores = (a @ b.transpose(1, 2)) * self.scale                             # [1, M, N]
        m, n = scores.shape[1], scores.shape[2]
        column = self.dustbin.expand(1, m, 1)
        row = self.dustbin.expand(1, 1, n + 1)
        couplings = torch.cat([torch.cat([scores, column], 2), row], 1)           # [1, M + 1, N + 1]
        norm = -math.log(m + n)
        log_mu = torch.cat([torch.full((m,), norm), torch.tensor([math.log(n) + norm])])[None]
        log_nu = torch.cat([torch.full((n,), norm), torch.tensor([math.log(m) + norm])])[None]
        u, v = torch.zeros_like(log_mu), torch.zeros_like(log_nu)
        for _ in range(self.iterations):
            u = log_mu - torch.logsumexp(couplings + v[:, None, :], 2)
            v = log_nu - torch.logsumexp(couplings + u[:, :, None], 1)
        z = couplings + u[:, :, None] + v[:, None, :] - norm
        return z, z[:, :-1, :-1].max(2)[0]


class GlobalResponseNorm(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.randn(1, 1, 1, width) * 0.1)
        self.beta = torch.nn.Parameter(torch.randn(1, 1, 1, width) * 0.1)

    def forward(self, x):                                                          # NHWC
        g = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        n = g / (g.mean(-1, keepdim=True) + 1e-6)
        return self.gamma * (x * n) + self.beta + x


class ConvNeXtV2Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.depthwise = torch.nn.Conv2d(width, width, 7, padding=3, groups=width)
        self.norm = torch.nn.LayerNorm(width, eps=1e-6)
        self.up = torch.nn.Linear(width, 4 * width)
        self.grn = GlobalResponseNorm(4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        y = self.norm(self.depthwise(x).permute(0, 2, 3, 1))
        y = self.down(self.grn(F.gelu(self.up(y))))
        return x + y.permute(0, 3, 1, 2)


class ChannelsFirstNorm(torch.nn.Module):
    """LayerNorm over the channels of an NCHW map, written with reductions over axis 1."""

    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(1, width, 1, 1))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(1, width, 1, 1))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class ConvNeXtV2(torch.nn.Module):
    def __init__(self, widths=(40, 80, 160, 320), depths=(2, 2, 6, 2), classes=1000):
        super().__init__()
        layers = [torch.nn.Conv2d(3, widths[0], 4, 4), ChannelsFirstNorm(widths[0])]
        for i, (width, depth) in enumerate(zip(widths, depths)):
            if i:
                layers += [ChannelsFirstNorm(widths[i - 1]), torch.nn.Conv2d(widths[i - 1], width, 2, 2)]
            layers += [ConvNeXtV2Block(width) for _ in range(depth)]
        self.features = torch.nn.Sequential(*layers)
        self.norm = torch.nn.LayerNorm(widths[-1])
        self.head = torch.nn.Linear(widths[-1], classes)

    def forward(self, x):
        return self.head(self.norm(self.features(x).mean((2, 3))))


class NafBlock(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm1, self.norm2 = ChannelsFirstNorm(width), ChannelsFirstNorm(width)
        self.expand = torch.nn.Conv2d(width, 2 * width, 1)
        self.depthwise = torch.nn.Conv2d(2 * width, 2 * width, 3, padding=1, groups=2 * width)
        self.attention = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(width, width, 1))
        self.project = torch.nn.Conv2d(width, width, 1)
        self.ffn_in = torch.nn.Conv2d(width, 2 * width, 1)
        self.ffn_out = torch.nn.Conv2d(width, width, 1)
        self.beta = torch.nn.Parameter(0.1 * torch.randn(1, width, 1, 1))
        self.gamma = torch.nn.Parameter(0.1 * torch.randn(1, width, 1, 1))

    def forward(self, x):
        a, b = self.depthwise(self.expand(self.norm1(x))).chunk(2, 1)
        y = a * b
        y = self.project(y * self.attention(y))
        x = x + y * self.beta
        a, b = self.ffn_in(self.norm2(x)).chunk(2, 1)
        return x + self.ffn_out(a * b) * self.gamma


class NafNet(torch.nn.Module):
    def __init__(self, width=16, levels=4):
        super().__init__()
        self.intro = torch.nn.Conv2d(3, width, 3, padding=1)
        self.encoders, self.downs, self.ups, self.decoders = (torch.nn.ModuleList() for _ in range(4))
        for i in range(levels):
            w = width * 2 ** i
            self.encoders.append(NafBlock(w))
            self.downs.append(torch.nn.Conv2d(w, 2 * w, 2, 2))
        self.middle = NafBlock(width * 2 ** levels)
        for i in reversed(range(levels)):
            w = width * 2 ** i
            self.ups.append(torch.nn.Sequential(torch.nn.Conv2d(2 * w, 4 * w, 1, bias=False), torch.nn.PixelShuffle(2)))
            self.decoders.append(NafBlock(w))
        self.ending = torch.nn.Conv2d(width, 3, 3, padding=1)

    def forward(self, image):
        x, skips = self.intro(image), []
        for encoder, down in zip(self.encoders, self.downs):
            x = encoder(x)
            skips.append(x)
            x = down(x)
        x = self.middle(x)
        for up, decoder, skip in zip(self.ups, self.decoders, reversed(skips)):
            x = decoder(up(x) + skip)
        return self.ending(x) + image


class FftBlock(torch.nn.Module):
    def __init__(self, d, heads, hidden, kernel=9):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.conv1 = torch.nn.Conv1d(d, hidden, kernel, padding=kernel // 2)
        self.conv2 = torch.nn.Conv1d(hidden, d, 1)

    def forward(self, x, mask):
        x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0]) * mask
        y = self.conv2(F.relu(self.conv1(x.transpose(1, 2)))).transpose(1, 2)
        return self.norm2(x + y) * mask


class FastSpeech(torch.nn.Module):
    def __init__(self, vocab=80, d=256, heads=2, hidden=1024, layers=2, mels=80, frames=400):
        super().__init__()
        self.frames = frames
        self.embed = torch.nn.Embedding(vocab, d)
        self.register_buffer("positions", torch.randn(1, frames, d) * 0.1)
        self.encoder = torch.nn.ModuleList(FftBlock(d, heads, hidden) for _ in range(layers))
        self.duration = torch.nn.Sequential(torch.nn.Conv1d(d, d, 3, padding=1), torch.nn.ReLU())
        self.duration_out = torch.nn.Linear(d, 1)
        with torch.no_grad():  # log durations of about 1.5-2 frames a token
            self.duration_out.weight.mul_(0.1)
            self.duration_out.bias.fill_(1.5)
        self.decoder = torch.nn.ModuleList(FftBlock(d, heads, hidden) for _ in range(layers))
        self.mel = torch.nn.Linear(d, mels)

    def forward(self, ids):
        tokens = ids.shape[1]
        x = self.embed(ids) + self.positions[:, :tokens]
        ones = torch.ones(1, tokens, 1)
        for block in self.encoder:
            x = block(x, ones)
        log_duration = self.duration_out(self.duration(x.transpose(1, 2)).transpose(1, 2)).squeeze(-1)     # [1, T]
        duration = torch.clamp(torch.round(torch.exp(log_duration) - 1), min=1)
        ends = duration.cumsum(-1)                                                                          # [1, T]
        frame = torch.arange(self.frames, dtype=torch.float32)[None, :, None]                               # [1, F, 1]
        token = (ends[:, None, :] <= frame).sum(-1).clamp(max=tokens - 1)                                   # [1, F]
        mask = (frame.squeeze(-1) < ends[:, -1:]).to(x.dtype)[..., None]                                    # [1, F, 1]
        y = x[0][token[0]][None] * mask + self.positions
        for block in self.decoder:
            y = block(y, mask)
        return self.mel(y) * mask


def square_distance(a, b):
    return (a * a).sum(-1, keepdim=True) - 2 * a @ b.transpose(1, 2) + (b * b).sum(-1)[:, None, :]


def farthest_points(xyz, count):
    """Indices [1, count] of farthest point sampling from point 0, unrolled as a traced loop exports it."""
    distance = torch.full(xyz.shape[:2], 1e10)
    farthest = torch.zeros(1, dtype=torch.long)
    chosen = []
    for _ in range(count):
        chosen.append(farthest)
        centroid = xyz[0, farthest][None]                                                     # [1, 1, 3]
        distance = torch.minimum(distance, ((xyz - centroid) ** 2).sum(-1))
        farthest = distance.argmax(-1)
    return torch.stack(chosen, 1)


class SetAbstraction(torch.nn.Module):
    def __init__(self, points, radius, group, cin, widths):
        super().__init__()
        self.points, self.radius, self.group = points, radius, group
        layers, c = [], cin + 3
        for w in widths:
            layers += [torch.nn.Conv2d(c, w, 1), torch.nn.BatchNorm2d(w), torch.nn.ReLU()]
            c = w
        self.mlp = torch.nn.Sequential(*layers)

    def forward(self, xyz, features):
        centres = xyz[0, farthest_points(xyz, self.points)[0]][None]                            # [1, S, 3]
        d = square_distance(centres, xyz)                                                       # [1, S, N]
        nearest_d, nearest = d.topk(self.group, -1, largest=False)                              # [1, S, K]
        nearest = torch.where(nearest_d > self.radius ** 2, nearest[..., :1], nearest)
        grouped_xyz = xyz[0][nearest[0]][None] - centres[:, :, None]                           # [1, S, K, 3]
        grouped = torch.cat([grouped_xyz, features[0][nearest[0]][None]], -1) if features is not None else grouped_xyz
        y = self.mlp(grouped.permute(0, 3, 2, 1))                                               # [1, C, K, S]
        return centres, y.max(2)[0].transpose(1, 2)                                             # [1, S, C]


class PointNet2(torch.nn.Module):
    def __init__(self, classes=40, points=(128, 32), widths=((32, 32, 64), (64, 64, 128))):
        super().__init__()
        self.sa1 = SetAbstraction(points[0], 0.2, 16, 0, widths[0])
        self.sa2 = SetAbstraction(points[1], 0.4, 16, widths[0][-1], widths[1])
        self.head = torch.nn.Sequential(torch.nn.Linear(widths[1][-1], 128), torch.nn.ReLU(), torch.nn.Linear(128, classes))

    def forward(self, xyz):
        c1, f1 = self.sa1(xyz, None)
        _, f2 = self.sa2(c1, f1)
        return self.head(f2.max(1)[0])


class Bottleneck3d(torch.nn.Module):
    def __init__(self, cin, cout, temporal, stride):
        super().__init__()
        mid = cout // 4
        self.body = torch.nn.Sequential(torch.nn.Conv3d(cin, mid, (temporal, 1, 1), padding=(temporal // 2, 0, 0), bias=False), torch.nn.BatchNorm3d(mid),
                                        torch.nn.ReLU(), torch.nn.Conv3d(mid, mid, (1, 3, 3), (1, stride, stride), (0, 1, 1), bias=False),
                                        torch.nn.BatchNorm3d(mid), torch.nn.ReLU(), torch.nn.Conv3d(mid, cout, 1, bias=False), torch.nn.BatchNorm3d(cout))
        self.shortcut = None if cin == cout and stride == 1 else torch.nn.Sequential(
            torch.nn.Conv3d(cin, cout, 1, (1, stride, stride), bias=False), torch.nn.BatchNorm3d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + (x if self.shortcut is None else self.shortcut(x)))


class SlowFast(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256), alpha=4, beta=8, classes=400):
        super().__init__()
        self.alpha = alpha
        self.slow_stem = torch.nn.Sequential(torch.nn.Conv3d(3, widths[0] // 2, (1, 7, 7), (1, 2, 2), (0, 3, 3), bias=False),
                                             torch.nn.BatchNorm3d(widths[0] // 2), torch.nn.ReLU(), torch.nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)))
        self.fast_stem = torch.nn.Sequential(torch.nn.Conv3d(3, widths[0] // 2 // beta, (5, 7, 7), (1, 2, 2), (2, 3, 3), bias=False),
                                             torch.nn.BatchNorm3d(widths[0] // 2 // beta), torch.nn.ReLU(),
                                             torch.nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)))
        self.laterals, self.slow, self.fast = torch.nn.ModuleList(), torch.nn.ModuleList(), torch.nn.ModuleList()
        slow_in, fast_in = widths[0] // 2, widths[0] // 2 // beta
        for i, w in enumerate(widths):
            self.laterals.append(torch.nn.Conv3d(fast_in, 2 * fast_in, (5, 1, 1), (alpha, 1, 1), (2, 0, 0), bias=False))
            stride = 1 if i == 0 else 2
            self.slow.append(Bottleneck3d(slow_in + 2 * fast_in, w, 1 if i < 2 else 3, stride))
            self.fast.append(Bottleneck3d(fast_in, w // beta, 3, stride))
            slow_in, fast_in = w, w // beta
        self.head = torch.nn.Linear(slow_in + fast_in, classes)

    def forward(self, frames):
        slow = self.slow_stem(frames[:, :, ::self.alpha])
        fast = self.fast_stem(frames)
        for lateral, slow_block, fast_block in zip(self.laterals, self.slow, self.fast):
            slow = slow_block(torch.cat([slow, lateral(fast)], 1))
            fast = fast_block(fast)
        pooled = torch.cat([slow.mean((2, 3, 4)), fast.mean((2, 3, 4))], 1)
        return self.head(pooled)


class ConvBnRelu(torch.nn.Sequential):
    def __init__(self, cin, cout, dilation=1):
        super().__init__(torch.nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation), torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


def upsample_like(x, like):
    return F.interpolate(x, size=like.shape[2:], mode="bilinear", align_corners=False)


class ResidualU(torch.nn.Module):
    """RSU-L: an encoder of `depth` levels (ceil-mode pools), a dilated bottom, a decoder by bilinear
    upsampling and concatenation; the input's projection added back."""

    def __init__(self, depth, cin, mid, cout):
        super().__init__()
        self.input = ConvBnRelu(cin, cout)
        self.encoders = torch.nn.ModuleList([ConvBnRelu(cout, mid)] + [ConvBnRelu(mid, mid) for _ in range(depth - 2)])
        self.bottom = ConvBnRelu(mid, mid, 2)
        self.decoders = torch.nn.ModuleList([ConvBnRelu(2 * mid, mid) for _ in range(depth - 2)] + [ConvBnRelu(2 * mid, cout)])

    def forward(self, x):
        x_in = self.input(x)
        skips, y = [], x_in
        for i, encoder in enumerate(self.encoders):
            y = encoder(y if i == 0 else F.max_pool2d(y, 2, 2, ceil_mode=True))
            skips.append(y)
        y = self.bottom(y)
        for decoder, skip in zip(self.decoders, reversed(skips)):
            y = decoder(torch.cat([upsample_like(y, skip), skip], 1))
        return y + x_in


class U2Net(torch.nn.Module):
    def __init__(self, mid=16, out=64, depths=(7, 6, 5, 4)):
        super().__init__()
        self.encoders = torch.nn.ModuleList([ResidualU(depths[0], 3, mid, out)] + [ResidualU(d, out, mid, out) for d in depths[1:]])
        self.bottom = ResidualU(4, out, mid, out)
        self.decoders = torch.nn.ModuleList(ResidualU(d, 2 * out, mid, out) for d in reversed(depths))
        self.sides = torch.nn.ModuleList(torch.nn.Conv2d(out, 1, 3, padding=1) for _ in range(len(depths) + 1))
        self.fuse = torch.nn.Conv2d(len(depths) + 1, 1, 1)

    def forward(self, image):
        skips, x = [], image
        for i, encoder in enumerate(self.encoders):
            x = encoder(x if i == 0 else F.max_pool2d(x, 2, 2, ceil_mode=True))
            skips.append(x)
        x = self.bottom(F.max_pool2d(x, 2, 2, ceil_mode=True))
        sides = [upsample_like(self.sides[-1](x), image)]
        for decoder, skip, side in zip(self.decoders, reversed(skips), reversed(self.sides[:-1])):
            x = decoder(torch.cat([upsample_like(x, skip), skip], 1))
            sides.insert(0, upsample_like(side(x), image))
        fused = self.fuse(torch.cat(sides, 1))
        return tuple(torch.sigmoid(s) for s in [fused] + sides)


def stn(small):
    model = SpatialTransformer(size=32, classes=3) if small else SpatialTransformer()
    return model.eval(), (seeded(2, 3, 32, 32) if small else seeded(4, 3, 128, 128),), ["images"], None


def sinkhorn(small):
    model = SinkhornMatcher(width=16, iterations=3) if small else SinkhornMatcher()
    m, n, d = (12, 10, 16) if small else (512, 512, 256)
    return model.eval(), (seeded(1, m, d), seeded(1, n + m, d)[:, :n].contiguous() * 0.5 + 0.1), ["first", "second"], None


def convnext_v2(small):
    model = ConvNeXtV2(widths=(8, 16), depths=(1, 1), classes=10) if small else ConvNeXtV2()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def nafnet(small):
    model = NafNet(width=4, levels=2) if small else NafNet()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["image"], None


def fastspeech(small):
    model = FastSpeech(vocab=20, d=16, heads=2, hidden=32, layers=1, mels=8, frames=40) if small else FastSpeech()
    return model.eval(), (random_ids(20 if small else 80, (1, 12 if small else 64), 1),), ["ids"], None


def pointnet2(small, batch_norm_statistics):
    model = PointNet2(classes=5, points=(16, 4), widths=((8, 8), (8, 16))) if small else PointNet2()
    return batch_norm_statistics(model).eval(), (seeded(1, 64 if small else 1024, 3) * 0.5,), ["points"], None


def slowfast(small, batch_norm_statistics):
    model = SlowFast(widths=(32, 64), classes=5) if small else SlowFast()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 8, 32, 32) if small else seeded(1, 3, 16, 112, 112),), ["frames"], None


def u2net(small, batch_norm_statistics):
    model = U2Net(mid=4, out=8, depths=(4, 3)) if small else U2Net()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["image"], None
