"""Eight families first run as held-out models (the seventeenth batch); scripts/user_models.py
registers them:

  hifigan             a HiFi-GAN vocoder generator: ConvTranspose1d upsampling by 8, 8 and 4,
                      multi-receptive-field residual blocks (dilated Conv1d of kernels 3, 7 and 11,
                      LeakyReLU before each), Tanh; mel [1,80,32] -> audio [1,1,8192]
  ecapa_tdnn          an ECAPA-TDNN speaker embedding: Conv1d + ReLU + BatchNorm1d, SE-Res2Net
                      blocks (the channels split in 8 groups, each a dilated Conv1d of the previous
                      group's output added), squeeze-excitation, the blocks' outputs concatenated,
                      attentive statistics pooling (softmax over time, weighted mean and standard
                      deviation by Sqrt of a clamped variance); features [2,80,200] -> [2,192]
  roi_head            a two-stage detector's second stage: a residual backbone to stride 8,
                      RoiAlign (torchvision.ops.roi_align, aligned) of 64 proposals to 7x7, a two-
                      layer box head, class scores by Softmax and boxes decoded from deltas (Exp,
                      clipped to the image); [1,3,256,256] and [64,4] boxes -> [64,21], [64,21,4]
  centernet           a CenterNet-style detector: a ResNet-ish encoder, three ConvTranspose
                      upsamplings, heatmap, size and offset heads (the heatmap's logits plus a 1x1
                      convolution of the 2x2-pooled image: an untrained decoder's heatmap is nearly
                      flat, and near-equal scores would order differently in every runtime); peaks
                      kept where a 3x3 MaxPool (stride 1) equals the heatmap, the top 40 by TopK,
                      their classes and cells by integer Div and Mod, sizes and offsets by
                      GatherElements; [1,3,256,256] -> boxes [1,40,4], scores [1,40], classes [1,40]
  tft                 a Temporal Fusion Transformer: gated residual networks (ELU, GLU by a Sigmoid
                      gate, LayerNorm), variable selection by Softmax over 8 inputs' embeddings, an
                      LSTM encoder, interpretable multi-head attention (shared values, a causal
                      mask), quantile outputs; [4,48,8] -> [4,48,3]
  nbeats              N-BEATS forecasting: stacks of fully connected blocks whose backcasts are
                      subtracted from the residual input and whose forecasts add up, trend blocks
                      expanding a polynomial basis and seasonality blocks a Fourier basis (MatMul
                      by constant bases); batch 256 of 96 steps -> [256,24]
  performer           a Performer encoder: FAVOR+ attention by positive random features (Exp of a
                      projection less half the squared norm, a stabilizing ReduceMax), linear in the
                      sequence by einsum, feed-forward with GELU; [2,512,128] -> [2,512,128]
  selu_tabular        a self-normalizing tabular network: SELU, CELU and Softplus layers, a
                      Hardswish gate, feature-wise LpNormalization and a log-softmax head; batch
                      1024 x 64 features -> [1024,10]
"""
import math

import torch
import torch.nn.functional as F
import torchvision

from seeded_inputs import seeded


class MultiReceptiveFieldBlock(torch.nn.Module):
    def __init__(self, channels, kernel, dilations=(1, 3, 5)):
        super().__init__()
        self.dilated = torch.nn.ModuleList(
            torch.nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2) for d in dilations)
        self.plain = torch.nn.ModuleList(torch.nn.Conv1d(channels, channels, kernel, padding=(kernel - 1) // 2) for _ in dilations)

    def forward(self, x):
        for dilated, plain in zip(self.dilated, self.plain):
            x = x + plain(F.leaky_relu(dilated(F.leaky_relu(x, 0.1)), 0.1))
        return x


class HifiGan(torch.nn.Module):
    def __init__(self, mels=80, width=128, rates=(8, 8, 4), kernels=(3, 7, 11)):
        super().__init__()
        self.pre = torch.nn.Conv1d(mels, width, 7, padding=3)
        self.ups, self.blocks = torch.nn.ModuleList(), torch.nn.ModuleList()
        channels = width
        for rate in rates:
            self.ups.append(torch.nn.ConvTranspose1d(channels, channels // 2, rate * 2, stride=rate, padding=rate // 2))
            channels //= 2
            self.blocks.append(torch.nn.ModuleList(MultiReceptiveFieldBlock(channels, k) for k in kernels))
        self.post = torch.nn.Conv1d(channels, 1, 7, padding=3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, blocks in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(block(x) for block in blocks) / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x)))


class SqueezeExcite1d(torch.nn.Module):
    def __init__(self, channels, bottleneck):
        super().__init__()
        self.down, self.up = torch.nn.Conv1d(channels, bottleneck, 1), torch.nn.Conv1d(bottleneck, channels, 1)

    def forward(self, x):
        return x * torch.sigmoid(self.up(F.relu(self.down(x.mean(2, keepdim=True)))))


class ConvReluNorm1d(torch.nn.Sequential):
    def __init__(self, cin, cout, kernel, dilation=1):
        super().__init__(torch.nn.Conv1d(cin, cout, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2),
                         torch.nn.ReLU(), torch.nn.BatchNorm1d(cout))


class SeRes2Block(torch.nn.Module):
    def __init__(self, channels, dilation, scale=8):
        super().__init__()
        self.scale, width = scale, channels // scale
        self.pre, self.post = ConvReluNorm1d(channels, channels, 1), ConvReluNorm1d(channels, channels, 1)
        self.groups = torch.nn.ModuleList(ConvReluNorm1d(width, width, 3, dilation) for _ in range(scale - 1))
        self.se = SqueezeExcite1d(channels, channels // 4)

    def forward(self, x):
        parts = list(torch.chunk(self.pre(x), self.scale, 1))
        out, previous = [parts[0]], None
        for part, conv in zip(parts[1:], self.groups):
            previous = conv(part if previous is None else part + previous)
            out.append(previous)
        return x + self.se(self.post(torch.cat(out, 1)))


class EcapaTdnn(torch.nn.Module):
    def __init__(self, features=80, channels=256, embedding=192, attention=64):
        super().__init__()
        self.stem = ConvReluNorm1d(features, channels, 5)
        self.blocks = torch.nn.ModuleList(SeRes2Block(channels, d) for d in (2, 3, 4))
        self.aggregate = ConvReluNorm1d(3 * channels, 3 * channels, 1)
        wide = 3 * channels
        self.attention = torch.nn.Sequential(torch.nn.Conv1d(3 * wide, attention, 1), torch.nn.Tanh(), torch.nn.Conv1d(attention, wide, 1))
        self.norm = torch.nn.BatchNorm1d(2 * wide)
        self.embed = torch.nn.Linear(2 * wide, embedding)

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for block in self.blocks:
            x = block(x)
            outs.append(x)
        x = self.aggregate(torch.cat(outs, 1))
        frames = x.shape[2]
        mean = x.mean(2, keepdim=True)
        std = torch.sqrt((x - mean).pow(2).mean(2, keepdim=True).clamp(min=1e-4))
        context = torch.cat([x, mean.expand(-1, -1, frames), std.expand(-1, -1, frames)], 1)
        weights = torch.softmax(self.attention(context), 2)
        weighted_mean = (weights * x).sum(2)
        weighted_std = torch.sqrt(((weights * x * x).sum(2) - weighted_mean * weighted_mean).clamp(min=1e-4))
        return self.embed(self.norm(torch.cat([weighted_mean, weighted_std], 1)))


def residual_stage(cin, cout, stride):
    return torch.nn.Sequential(
        torch.nn.Conv2d(cin, cout, 3, stride=stride, padding=1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU(),
        torch.nn.Conv2d(cout, cout, 3, padding=1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


class RoiHead(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128), classes=21, hidden=256, pooled=7, image_size=256):
        super().__init__()
        stages, cin = [], 3
        for w in widths:
            stages.append(residual_stage(cin, w, 2))
            cin = w
        self.backbone = torch.nn.Sequential(*stages)
        self.stride, self.pooled, self.classes, self.image_size = 2 ** len(widths), pooled, classes, image_size
        self.box_head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(cin * pooled * pooled, hidden), torch.nn.ReLU(),
                                            torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
        self.scores, self.deltas = torch.nn.Linear(hidden, classes), torch.nn.Linear(hidden, classes * 4)

    def forward(self, image, proposals):
        features = self.backbone(image)
        rois = torch.cat([torch.zeros_like(proposals[:, :1]), proposals], 1)
        pooled = torchvision.ops.roi_align(features, rois, self.pooled, 1.0 / self.stride, 2, True)
        hidden = self.box_head(pooled)
        deltas = self.deltas(hidden).reshape(-1, self.classes, 4)
        widths, heights = proposals[:, 2:3] - proposals[:, 0:1], proposals[:, 3:4] - proposals[:, 1:2]
        cx, cy = proposals[:, 0:1] + 0.5 * widths, proposals[:, 1:2] + 0.5 * heights
        px, py = cx + deltas[..., 0] * widths, cy + deltas[..., 1] * heights
        pw = torch.exp(deltas[..., 2].clamp(max=math.log(1000 / 16))) * widths
        ph = torch.exp(deltas[..., 3].clamp(max=math.log(1000 / 16))) * heights
        boxes = torch.stack([px - 0.5 * pw, py - 0.5 * ph, px + 0.5 * pw, py + 0.5 * ph], 2).clamp(0, self.image_size)
        return torch.softmax(self.scores(hidden), 1), boxes


class CenterNet(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=20, head=64, top=40):
        super().__init__()
        stages, cin = [torch.nn.Conv2d(3, widths[0], 7, stride=2, padding=3), torch.nn.BatchNorm2d(widths[0]), torch.nn.ReLU()], widths[0]
        for w in widths[1:]:
            stages.append(residual_stage(cin, w, 2))
            cin = w
        self.encoder = torch.nn.Sequential(*stages)
        ups = []
        for w in (128, 64, head)[: len(widths) - 1]:
            ups += [torch.nn.ConvTranspose2d(cin, w, 4, stride=2, padding=1), torch.nn.BatchNorm2d(w), torch.nn.ReLU()]
            cin = w
        self.decoder = torch.nn.Sequential(*ups)

        def head_net(cout):
            return torch.nn.Sequential(torch.nn.Conv2d(cin, head, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(head, cout, 1))
        self.heatmap, self.size, self.offset = head_net(classes), head_net(2), head_net(2)
        self.image_prior = torch.nn.Conv2d(3, classes, 1)
        self.classes, self.top = classes, top

    def forward(self, image):
        x = self.decoder(self.encoder(image))
        heat = torch.sigmoid(self.heatmap(x) + self.image_prior(F.avg_pool2d(image, 2)))  # the decoder ends at stride 2
        b, c, h, w = heat.shape
        peaks = heat * (F.max_pool2d(heat, 3, 1, 1) == heat).float()
        scores, index = torch.topk(peaks.reshape(b, -1), self.top)
        classes = torch.div(index, h * w, rounding_mode="floor")
        cells = index % (h * w)
        ys, xs = torch.div(cells, w, rounding_mode="floor").float(), (cells % w).float()
        size = torch.gather(self.size(x).reshape(b, 2, h * w), 2, cells.unsqueeze(1).expand(-1, 2, -1))
        offset = torch.gather(self.offset(x).reshape(b, 2, h * w), 2, cells.unsqueeze(1).expand(-1, 2, -1))
        cx, cy = xs + offset[:, 0], ys + offset[:, 1]
        boxes = torch.stack([cx - size[:, 0] / 2, cy - size[:, 1] / 2, cx + size[:, 0] / 2, cy + size[:, 1] / 2], 2)
        return boxes, scores, classes


class GatedResidual(torch.nn.Module):
    def __init__(self, d, hidden=None, out=None):
        super().__init__()
        hidden, out = hidden or d, out or d
        self.fc1, self.fc2 = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, 2 * out)
        self.skip = torch.nn.Linear(d, out) if out != d else torch.nn.Identity()
        self.norm = torch.nn.LayerNorm(out)

    def forward(self, x):
        return self.norm(self.skip(x) + F.glu(self.fc2(F.elu(self.fc1(x))), -1))


class TemporalFusionTransformer(torch.nn.Module):
    def __init__(self, inputs=8, d=64, heads=4, quantiles=3):
        super().__init__()
        self.embeddings = torch.nn.ModuleList(torch.nn.Linear(1, d) for _ in range(inputs))
        self.selection = GatedResidual(inputs * d, d, inputs)
        self.variables = torch.nn.ModuleList(GatedResidual(d) for _ in range(inputs))
        self.lstm = torch.nn.LSTM(d, d, batch_first=True)
        self.gate = GatedResidual(d)
        self.heads, self.head_dim = heads, d // heads
        self.queries, self.keys = torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.value = torch.nn.Linear(d, self.head_dim)
        self.attention_out = torch.nn.Linear(self.head_dim, d)
        self.enrich, self.output = GatedResidual(d), torch.nn.Linear(d, quantiles)

    def forward(self, series):
        b, t, n = series.shape
        embedded = torch.stack([e(series[..., i:i + 1]) for i, e in enumerate(self.embeddings)], 2)  # [b,t,n,d]
        weights = torch.softmax(self.selection(embedded.reshape(b, t, -1)), -1).unsqueeze(-1)
        selected = (torch.stack([v(embedded[:, :, i]) for i, v in enumerate(self.variables)], 2) * weights).sum(2)
        encoded, _ = self.lstm(selected)
        x = self.gate(encoded + selected)
        q = self.queries(x).reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.keys(x).reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        causal = torch.triu(torch.full((t, t), float("-inf")), 1)
        attention = torch.softmax(scores + causal, -1).mean(1)  # interpretable: heads share the values
        attended = self.attention_out(attention @ self.value(x))
        return self.output(self.enrich(x + attended))


class NBeatsBlock(torch.nn.Module):
    def __init__(self, backcast, forecast, hidden, basis):
        super().__init__()
        self.stack = torch.nn.Sequential(*[m for i in range(4) for m in (torch.nn.Linear(backcast if i == 0 else hidden, hidden), torch.nn.ReLU())])
        backcast_basis, forecast_basis = basis(backcast), basis(forecast)
        self.theta_back = torch.nn.Linear(hidden, backcast_basis.shape[0], bias=False)
        self.theta_fore = torch.nn.Linear(hidden, forecast_basis.shape[0], bias=False)
        self.register_buffer("backcast_basis", backcast_basis)
        self.register_buffer("forecast_basis", forecast_basis)

    def forward(self, x):
        h = self.stack(x)
        return self.theta_back(h) @ self.backcast_basis, self.theta_fore(h) @ self.forecast_basis


def trend_basis(steps, degree=3):
    t = torch.arange(steps, dtype=torch.float32) / steps
    return torch.stack([t ** p for p in range(degree + 1)])


def seasonality_basis(steps, harmonics=8):
    t = torch.arange(steps, dtype=torch.float32) / steps
    k = torch.arange(1, harmonics + 1, dtype=torch.float32).unsqueeze(1)
    return torch.cat([torch.ones(1, steps), torch.cos(2 * math.pi * k * t), torch.sin(2 * math.pi * k * t)])


class NBeats(torch.nn.Module):
    def __init__(self, backcast=96, forecast=24, hidden=256, blocks=3):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            [NBeatsBlock(backcast, forecast, hidden, trend_basis) for _ in range(blocks)] +
            [NBeatsBlock(backcast, forecast, hidden, seasonality_basis) for _ in range(blocks)])

    def forward(self, x):
        forecast = 0
        for block in self.blocks:
            back, fore = block(x)
            x, forecast = x - back, forecast + fore
        return forecast


class FavorAttention(torch.nn.Module):
    def __init__(self, d, heads, features):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.qkv, self.out = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        projection = torch.randn(features, self.head_dim, generator=torch.Generator().manual_seed(5))
        self.register_buffer("projection", projection)

    def features(self, x, is_query):
        x = x * self.head_dim ** -0.25
        projected = torch.einsum("bhnd,md->bhnm", x, self.projection)
        half_norm = (x * x).sum(-1, keepdim=True) / 2
        stabilizer = projected.amax(-1, keepdim=True) if is_query else projected.amax((-1, -2), keepdim=True)
        return torch.exp(projected - half_norm - stabilizer) / math.sqrt(self.projection.shape[0]) + 1e-4

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        qf, kf = self.features(q, True), self.features(k, False)
        kv = torch.einsum("bhnm,bhnd->bhmd", kf, v)
        normalizer = 1 / torch.einsum("bhnm,bhm->bhn", qf, kf.sum(2))
        out = torch.einsum("bhnm,bhmd,bhn->bhnd", qf, kv, normalizer)
        return self.out(out.transpose(1, 2).reshape(b, n, d))


class Performer(torch.nn.Module):
    def __init__(self, d=128, heads=4, features=64, layers=2):
        super().__init__()
        self.attention = torch.nn.ModuleList(FavorAttention(d, heads, features) for _ in range(layers))
        self.ffn = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d)) for _ in range(layers))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(2 * layers))

    def forward(self, x):
        for i, (attention, ffn) in enumerate(zip(self.attention, self.ffn)):
            x = x + attention(self.norms[2 * i](x))
            x = x + ffn(self.norms[2 * i + 1](x))
        return x


class SeluTabular(torch.nn.Module):
    def __init__(self, features=64, hidden=256, classes=10):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(features, hidden), torch.nn.Linear(hidden, hidden), torch.nn.Linear(hidden, hidden)
        self.gate, self.head = torch.nn.Linear(features, hidden), torch.nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.normalize(x, p=2.0, dim=1)
        h = F.selu(self.fc1(x))
        h = F.celu(self.fc2(h), 0.5)
        h = F.softplus(self.fc3(h)) * F.hardswish(self.gate(x))
        return F.log_softmax(self.head(h), 1)


def hifigan(small):
    model = HifiGan(mels=8, width=16, rates=(2, 2), kernels=(3,)) if small else HifiGan()
    return model.eval(), (seeded(1, 8, 10) if small else seeded(1, 80, 32),), ["mel"], None


def ecapa_tdnn(small, batch_norm_statistics):
    model = EcapaTdnn(features=8, channels=16, embedding=8, attention=8) if small else EcapaTdnn()
    return batch_norm_statistics(model).eval(), (seeded(2, 8, 20) if small else seeded(2, 80, 200),), ["features"], None


def proposals(count, image_size, seed):
    generator = torch.Generator().manual_seed(seed)
    corner = torch.rand(count, 2, generator=generator) * image_size * 0.7
    size = (torch.rand(count, 2, generator=generator) * 0.3 + 0.05) * image_size
    return torch.cat([corner, corner + size], 1)


def roi_head(small, batch_norm_statistics):
    if small:
        model, size, count = RoiHead(widths=(4, 8), classes=3, hidden=16, pooled=3, image_size=32), 32, 5
    else:
        model, size, count = RoiHead(), 256, 64
    return batch_norm_statistics(model).eval(), (seeded(1, 3, size, size), proposals(count, size, 4)), ["image", "proposals"], None


def centernet(small, batch_norm_statistics):
    model = CenterNet(widths=(8, 16), classes=3, head=8, top=10) if small else CenterNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["image"], None


def tft(small):
    model = TemporalFusionTransformer(inputs=3, d=8, heads=2) if small else TemporalFusionTransformer()
    return model.eval(), (seeded(2, 6, 3) if small else seeded(4, 48, 8),), ["series"], None


def nbeats(small):
    model = NBeats(backcast=12, forecast=4, hidden=16, blocks=1) if small else NBeats()
    return model.eval(), (seeded(4, 12) if small else seeded(256, 96),), ["history"], None


def performer(small):
    model = Performer(d=16, heads=2, features=8, layers=1) if small else Performer()
    return model.eval(), (seeded(1, 10, 16) if small else seeded(2, 512, 128),), ["tokens"], None


def selu_tabular(small):
    model = SeluTabular(features=6, hidden=16, classes=3) if small else SeluTabular()
    return model.eval(), (seeded(8, 6) if small else seeded(1024, 64),), ["features"], None
