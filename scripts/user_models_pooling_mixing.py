"""Seven families first run as held-out models (the eighth batch): two had an op on the reference
kernels (an Einsum of three operands, MaxPool's Indices output); scripts/user_models.py registers
them:

  segnet              SegNet-style segmentation: VGG-like encoder blocks whose 2x2 max pools keep
                      their indices (torch.onnx writes MaxPool's Indices and a 1x1 MaxPool for each
                      plane's offset), decoders unpooling by scattering into zeros (ScatterElements);
                      [1,3,256,256] -> [1,12,256,256]
  pspnet              PSPNet-style pyramid pooling: a strided stem, adaptive average pools to 1, 2,
                      3 and 6 bins, 1x1 reductions, bilinear upsampling, concatenation, an 8x
                      bilinear upsampling of the logits; [1,3,384,384] -> [1,21,384,384]
  mlp_mixer           MLP-Mixer: 16x16 patches, token-mixing MLPs over the transposed tokens and
                      channel-mixing MLPs, LayerNorm, GELU; [1,3,224,224] -> [1,1000]
  linear_attention    a linear-attention (Performer-like) encoder: elu + 1 features, the key-value
                      summary and its normalised product as torch.einsum of two and three operands;
                      [1,1024,256]
  nerf                a NeRF MLP over 4096 points: sin/cos positional encoding of 10 frequencies,
                      8 layers of 256 with a skip concatenation, sigmoid colour, softplus density;
                      [4096,3] -> [4096,4]
  lrn_alexnet         the original AlexNet: LocalResponseNorm after the first two convolutions,
                      grouped (2) 5x5 and 3x3 convolutions, 3x3 stride-2 max pools, a 9216-wide
                      classifier; [1,3,224,224] -> [1,1000]
  hrnet_lite          HRNet-style multi-resolution fusion: three branches at 1/4, 1/8 and 1/16
                      exchanging by 1x1 convolutions with nearest upsampling and strided 3x3
                      convolutions, residual blocks; [1,3,256,256] -> [1,17,64,64]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import seeded


def _conv_bn_relu(c_in, c_out):
    return [torch.nn.Conv2d(c_in, c_out, 3, padding=1), torch.nn.BatchNorm2d(c_out), torch.nn.ReLU()]


class SegNet(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128), classes=12):
        super().__init__()
        self.encoders, self.decoders, c = torch.nn.ModuleList(), torch.nn.ModuleList(), 3
        for w in widths:
            self.encoders.append(torch.nn.Sequential(*_conv_bn_relu(c, w), *_conv_bn_relu(w, w)))
            c = w
        for w in list(widths[:-1])[::-1] + [widths[0]]:
            self.decoders.append(torch.nn.Sequential(*_conv_bn_relu(c, w)))
            c = w
        self.head = torch.nn.Conv2d(c, classes, 1)

    def forward(self, x):
        indices = []
        for encoder in self.encoders:
            x, i = F.max_pool2d(encoder(x), 2, 2, return_indices=True)
            indices.append(i)
        for decoder in self.decoders:  # max_unpool2d as torch.onnx can write it: a scatter into zeros
            i = indices.pop()
            b, c, h, w = x.shape
            x = decoder(torch.zeros(b, c, 4 * h * w).scatter(2, i.flatten(2), x.flatten(2)).view(b, c, 2 * h, 2 * w))
        return self.head(x)


class PspNet(torch.nn.Module):
    def __init__(self, width=64, classes=21, bins=(1, 2, 3, 6)):
        super().__init__()
        w = width
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, w, 3, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(w, 2 * w, 3, 2, 1), torch.nn.ReLU(),
                                        torch.nn.Conv2d(2 * w, 4 * w, 3, 2, 1), torch.nn.ReLU())
        self.bins = bins
        self.reduce = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Conv2d(4 * w, w, 1), torch.nn.ReLU()) for _ in bins])
        self.head = torch.nn.Sequential(torch.nn.Conv2d(4 * w + len(bins) * w, w, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(w, classes, 1))

    def forward(self, x):
        f = self.stem(x)
        size = f.shape[2:]
        pyramid = [F.interpolate(r(F.adaptive_avg_pool2d(f, b)), size=size, mode="bilinear", align_corners=False) for b, r in zip(self.bins, self.reduce)]
        return F.interpolate(self.head(torch.cat([f] + pyramid, 1)), scale_factor=8, mode="bilinear", align_corners=False)


class MixerLayer(torch.nn.Module):
    def __init__(self, tokens, d):
        super().__init__()
        self.norm_tokens, self.norm_channels = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.tokens = torch.nn.Sequential(torch.nn.Linear(tokens, 2 * tokens), torch.nn.GELU(), torch.nn.Linear(2 * tokens, tokens))
        self.channels = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.tokens(self.norm_tokens(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channels(self.norm_channels(x))


class MlpMixer(torch.nn.Module):
    def __init__(self, d=256, layers=8, patch=16, image=224, classes=1000):
        super().__init__()
        self.patches = torch.nn.Conv2d(3, d, patch, patch)
        self.layers = torch.nn.Sequential(*[MixerLayer((image // patch) ** 2, d) for _ in range(layers)])
        self.norm, self.fc = torch.nn.LayerNorm(d), torch.nn.Linear(d, classes)

    def forward(self, x):
        return self.fc(self.norm(self.layers(self.patches(x).flatten(2).transpose(1, 2))).mean(1))


class LinearAttention(torch.nn.Module):
    def __init__(self, d=256, heads=8, layers=4):
        super().__init__()
        self.heads = heads
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])
        self.ff = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d)) for _ in range(layers)])

    def forward(self, x):
        b, n, d = x.shape
        for norm, qkv, out, ff in zip(self.norms, self.qkv, self.out, self.ff):
            q, k, v = qkv(norm(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            q, k = F.elu(q) + 1, F.elu(k) + 1
            kv = torch.einsum("bhnd,bhne->bhde", k, v)
            z = 1 / (torch.einsum("bhnd,bhd->bhn", q, k.sum(2)) + 1e-6)
            attention = torch.einsum("bhnd,bhde,bhn->bhne", q, kv, z)
            x = x + out(attention.transpose(1, 2).reshape(b, n, d))
            x = x + ff(x)
        return x


class Nerf(torch.nn.Module):
    def __init__(self, width=256, frequencies=10):
        super().__init__()
        self.register_buffer("frequencies", 2.0 ** torch.arange(frequencies) * math.pi)
        encoded = 3 + 6 * frequencies
        self.first = torch.nn.ModuleList([torch.nn.Linear(encoded if k == 0 else width, width) for k in range(4)])
        self.second = torch.nn.ModuleList([torch.nn.Linear(width + encoded if k == 0 else width, width) for k in range(4)])
        self.density, self.colour = torch.nn.Linear(width, 1), torch.nn.Linear(width, 3)

    def forward(self, points):
        angles = (points[..., None] * self.frequencies).flatten(-2)
        encoded = torch.cat([points, torch.sin(angles), torch.cos(angles)], -1)
        h = encoded
        for layer in self.first:
            h = F.relu(layer(h))
        h = torch.cat([h, encoded], -1)
        for layer in self.second:
            h = F.relu(layer(h))
        return torch.cat([torch.sigmoid(self.colour(h)), F.softplus(self.density(h))], -1)


class LrnAlexNet(torch.nn.Module):
    def __init__(self, widths=(96, 256, 384, 256), hidden=1024, classes=1000):
        super().__init__()
        a, b, c, d = widths
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, a, 11, 4, 2), torch.nn.ReLU(), torch.nn.LocalResponseNorm(5), torch.nn.MaxPool2d(3, 2),
            torch.nn.Conv2d(a, b, 5, padding=2, groups=2), torch.nn.ReLU(), torch.nn.LocalResponseNorm(5), torch.nn.MaxPool2d(3, 2),
            torch.nn.Conv2d(b, c, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(c, d, 3, padding=1, groups=2), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2))
        self.classifier = torch.nn.Sequential(torch.nn.Linear(d * 36, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes))

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def _residual_block(c):
    return torch.nn.Sequential(*_conv_bn_relu(c, c), torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.BatchNorm2d(c))


class HrnetLite(torch.nn.Module):
    def __init__(self, w=32, stages=3, joints=17):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, w, 3, 2, 1), torch.nn.BatchNorm2d(w), torch.nn.ReLU(),
                                        torch.nn.Conv2d(w, w, 3, 2, 1), torch.nn.BatchNorm2d(w), torch.nn.ReLU())
        self.down_1, self.down_2 = torch.nn.Conv2d(w, 2 * w, 3, 2, 1), torch.nn.Conv2d(2 * w, 4 * w, 3, 2, 1)
        self.blocks = torch.nn.ModuleList([torch.nn.ModuleList([_residual_block(w), _residual_block(2 * w), _residual_block(4 * w)]) for _ in range(stages)])
        self.from_2 = torch.nn.ModuleList([torch.nn.Conv2d(2 * w, w, 1) for _ in range(stages)])
        self.from_4 = torch.nn.ModuleList([torch.nn.Conv2d(4 * w, w, 1) for _ in range(stages)])
        self.to_2 = torch.nn.ModuleList([torch.nn.Conv2d(w, 2 * w, 3, 2, 1) for _ in range(stages)])
        self.head = torch.nn.Conv2d(w, joints, 1)

    def forward(self, x):
        a = self.stem(x)
        b = self.down_1(a)
        c = self.down_2(b)
        for blocks, from_2, from_4, to_2 in zip(self.blocks, self.from_2, self.from_4, self.to_2):
            a, b, c = [F.relu(block(v) + v) for block, v in zip(blocks, (a, b, c))]
            fused = a + F.interpolate(from_2(b), scale_factor=2.0, mode="nearest") + F.interpolate(from_4(c), scale_factor=4.0, mode="nearest")
            b = b + to_2(a)
            a = fused
        return self.head(a)


def segnet(small, batch_norm_statistics):
    model = SegNet(widths=(4, 8, 8), classes=3) if small else SegNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["input"], None


def pspnet(small):
    model = PspNet(width=4, classes=3) if small else PspNet()
    return model.eval(), (seeded(1, 3, 48, 48) if small else seeded(1, 3, 384, 384),), ["input"], None


def mlp_mixer(small):
    model = MlpMixer(d=16, layers=1, patch=8, image=32, classes=10) if small else MlpMixer()
    return model.eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def linear_attention(small):
    model = LinearAttention(d=16, heads=2, layers=1) if small else LinearAttention()
    return model.eval(), (seeded(1, 16, 16) if small else seeded(1, 1024, 256),), ["input"], None


def nerf(small):
    model = Nerf(width=16, frequencies=2) if small else Nerf()
    return model.eval(), (seeded(64, 3) if small else seeded(4096, 3),), ["input"], None


def lrn_alexnet(small):
    model = LrnAlexNet(widths=(8, 16, 16, 8), hidden=32, classes=10) if small else LrnAlexNet()
    return model.eval(), (seeded(1, 3, 224, 224),), ["input"], None


def hrnet_lite(small, batch_norm_statistics):
    model = HrnetLite(w=4, stages=1, joints=3) if small else HrnetLite()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["input"], None
