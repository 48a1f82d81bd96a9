"""Six families first run as held-out models (the twelfth batch): attention maps over channels and
positions, multi-branch and multi-scale blocks; scripts/user_models.py registers them:

  cbam_resnet         a ResNet-18-like net with CBAM in each block: channel attention (average- and
                      max-pooled MLP) and spatial attention (the channels' mean and max, a 7x7
                      convolution, Sigmoid, times every channel); [1,3,224,224] -> [1,1000]
  sknet               selective-kernel convolutions: two grouped branches (one dilated), a softmax
                      over the branches per channel from their pooled sum; [1,3,224,224] -> [1,100]
  eca_net             efficient channel attention: a Conv1d across the pooled channels, Sigmoid, times
                      the channels; [1,3,224,224] -> [1,10]
  nonlocal_net        non-local blocks: attention over all positions of a feature map (1x1
                      embeddings, the keys and values max-pooled), added back; [1,3,128,128] -> [1,10]
  bisenet             BiSeNet-style segmentation: a spatial path, a context path with attention
                      refinement, feature fusion, bilinear upsampling; [1,3,256,512] -> [1,19,256,512]
  res2net             Res2Net blocks: the 3x3 stage split into scales, each fed the one before;
                      [1,3,224,224] -> [1,100]
"""
import torch
import torch.nn.functional as F

from seeded_inputs import seeded


def conv_bn_relu(cin, cout, k=3, stride=1, groups=1, dilation=1):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, stride, dilation * (k // 2), dilation=dilation, groups=groups, bias=False),
                               torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


class Cbam(torch.nn.Module):
    def __init__(self, c, reduction=16):
        super().__init__()
        hidden = max(c // reduction, 1)
        self.mlp = torch.nn.Sequential(torch.nn.Conv2d(c, hidden, 1), torch.nn.ReLU(), torch.nn.Conv2d(hidden, c, 1))
        self.spatial = torch.nn.Conv2d(2, 1, 7, 1, 3)

    def forward(self, x):
        x = x * torch.sigmoid(self.mlp(F.adaptive_avg_pool2d(x, 1)) + self.mlp(F.adaptive_max_pool2d(x, 1)))
        maps = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)
        return x * torch.sigmoid(self.spatial(maps))


class CbamBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = torch.nn.Sequential(conv_bn_relu(cin, cout, 3, stride), torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(cout))
        self.cbam = Cbam(cout)
        self.short = (torch.nn.Identity() if stride == 1 and cin == cout
                      else torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout)))

    def forward(self, x):
        return F.relu(self.cbam(self.body(x)) + self.short(x))


class CbamResNet(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256, 512), classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(conv_bn_relu(3, widths[0], 7, 2), torch.nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, c in enumerate(widths):
            blocks += [CbamBlock(cin, c, 1 if i == 0 else 2), CbamBlock(c, c, 1)]
            cin = c
        self.blocks = torch.nn.Sequential(*blocks)
        self.fc = torch.nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1))


class SelectiveKernel(torch.nn.Module):
    def __init__(self, c, reduction=8, groups=32):
        super().__init__()
        g = groups if c % groups == 0 else 1
        hidden = max(c // reduction, 8)
        self.narrow = conv_bn_relu(c, c, 3, groups=g)
        self.wide = conv_bn_relu(c, c, 3, groups=g, dilation=2)
        self.squeeze = torch.nn.Sequential(torch.nn.Conv2d(c, hidden, 1, bias=False), torch.nn.BatchNorm2d(hidden), torch.nn.ReLU())
        self.select = torch.nn.Conv2d(hidden, 2 * c, 1)

    def forward(self, x):
        a, b = self.narrow(x), self.wide(x)
        weights = self.select(self.squeeze(F.adaptive_avg_pool2d(a + b, 1))).view(x.shape[0], 2, x.shape[1], 1, 1).softmax(1)
        return a * weights[:, 0] + b * weights[:, 1]


class SkNet(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256, 256), classes=100):
        super().__init__()
        self.stem = torch.nn.Sequential(conv_bn_relu(3, widths[0], 3, 2), conv_bn_relu(widths[0], widths[0], 3, 2))
        layers, cin = [], widths[0]
        for c in widths[1:]:
            layers += [conv_bn_relu(cin, c, 1), SelectiveKernel(c), torch.nn.MaxPool2d(2)]
            cin = c
        self.body = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(self.stem(x)), 1).flatten(1))


class EfficientChannelAttention(torch.nn.Module):
    def __init__(self, k=5):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 1, k, padding=k // 2, bias=False)

    def forward(self, x):
        pooled = F.adaptive_avg_pool2d(x, 1).squeeze(-1).transpose(1, 2)
        return x * torch.sigmoid(self.conv(pooled).transpose(1, 2).unsqueeze(-1))


class EcaNet(torch.nn.Module):
    def __init__(self, stages=((32, 64, 2), (64, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1)), classes=10):
        super().__init__()
        layers = [conv_bn_relu(3, stages[0][0], 3, 2)]
        for cin, cout, stride in stages:
            layers += [conv_bn_relu(cin, cout, 3, stride), EfficientChannelAttention()]
        self.body = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(stages[-1][1], classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


class NonLocal(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.theta, self.phi, self.g = (torch.nn.Conv2d(c, c // 2, 1) for _ in range(3))
        self.out = torch.nn.Sequential(torch.nn.Conv2d(c // 2, c, 1), torch.nn.BatchNorm2d(c))

    def forward(self, x):
        b, c, h, w = x.shape
        queries = self.theta(x).flatten(2).transpose(1, 2)
        keys = F.max_pool2d(self.phi(x), 2).flatten(2)
        values = F.max_pool2d(self.g(x), 2).flatten(2).transpose(1, 2)
        y = (queries @ keys).softmax(-1) @ values
        return x + self.out(y.transpose(1, 2).reshape(b, c // 2, h, w))


class NonLocalNet(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256), classes=10):
        super().__init__()
        a, b, c = widths
        self.body = torch.nn.Sequential(conv_bn_relu(3, a, 3, 2), conv_bn_relu(a, b, 3, 2), NonLocal(b), conv_bn_relu(b, c, 3, 2), NonLocal(c),
                                        conv_bn_relu(c, c, 3))
        self.fc = torch.nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


class BiSeNet(torch.nn.Module):
    def __init__(self, c=128, classes=19):
        super().__init__()
        self.spatial = torch.nn.Sequential(conv_bn_relu(3, c // 2, 7, 2), conv_bn_relu(c // 2, c // 2, 3, 2), conv_bn_relu(c // 2, c // 2, 3, 2),
                                           conv_bn_relu(c // 2, c, 1))
        self.context8 = torch.nn.Sequential(conv_bn_relu(3, c // 4, 3, 2), conv_bn_relu(c // 4, c // 2, 3, 2), conv_bn_relu(c // 2, c, 3, 2))
        self.context16, self.context32 = conv_bn_relu(c, c, 3, 2), conv_bn_relu(c, c, 3, 2)
        self.refine16, self.refine32 = (torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(c, c, 1), torch.nn.Sigmoid()) for _ in range(2))
        self.fuse = conv_bn_relu(2 * c, c, 1)
        self.fuse_attention = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(c, c // 4, 1), torch.nn.ReLU(), torch.nn.Conv2d(c // 4, c, 1),
                                                  torch.nn.Sigmoid())
        self.head = torch.nn.Conv2d(c, classes, 1)

    def forward(self, x):
        spatial = self.spatial(x)
        f16 = self.context16(self.context8(x))
        f32 = self.context32(f16)
        f32, f16 = f32 * self.refine32(f32), f16 * self.refine16(f16)
        context = F.interpolate(f32, size=f16.shape[2:], mode="bilinear", align_corners=False) + f16
        context = F.interpolate(context, size=spatial.shape[2:], mode="bilinear", align_corners=False)
        fused = self.fuse(torch.cat([spatial, context], 1))
        fused = fused + fused * self.fuse_attention(fused)
        return F.interpolate(self.head(fused), size=x.shape[2:], mode="bilinear", align_corners=False)


class Res2Block(torch.nn.Module):
    def __init__(self, c, scales=4):
        super().__init__()
        self.width = c // scales
        self.convs = torch.nn.ModuleList([conv_bn_relu(self.width, self.width, 3) for _ in range(scales - 1)])
        self.pre = conv_bn_relu(c, c, 1)
        self.post = torch.nn.Sequential(torch.nn.Conv2d(c, c, 1, bias=False), torch.nn.BatchNorm2d(c))

    def forward(self, x):
        parts = torch.split(self.pre(x), self.width, 1)
        out, y = [parts[0]], None
        for i, conv in enumerate(self.convs):
            y = conv(parts[i + 1] if y is None else parts[i + 1] + y)
            out.append(y)
        return F.relu(x + self.post(torch.cat(out, 1)))


class Res2Net(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256), classes=100):
        super().__init__()
        a, b, c = widths
        self.stem = torch.nn.Sequential(conv_bn_relu(3, a, 3, 2), torch.nn.MaxPool2d(2))
        self.body = torch.nn.Sequential(Res2Block(a), conv_bn_relu(a, b, 3, 2), Res2Block(b), Res2Block(b), conv_bn_relu(b, c, 3, 2), Res2Block(c))
        self.fc = torch.nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(self.stem(x)), 1).flatten(1))


def cbam_resnet(small, batch_norm_statistics):
    model = CbamResNet(widths=(16, 32), classes=10) if small else CbamResNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def sknet(small, batch_norm_statistics):
    model = SkNet(widths=(16, 32, 32), classes=10) if small else SkNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def eca_net(small, batch_norm_statistics):
    model = EcaNet(stages=((8, 16, 2), (16, 16, 1)), classes=4) if small else EcaNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None


def nonlocal_net(small, batch_norm_statistics):
    model = NonLocalNet(widths=(8, 16, 16), classes=4) if small else NonLocalNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 128, 128),), ["input"], None


def bisenet(small, batch_norm_statistics):
    model = BiSeNet(c=16, classes=3) if small else BiSeNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 64, 64) if small else seeded(1, 3, 256, 512),), ["input"], None


def res2net(small, batch_norm_statistics):
    model = Res2Net(widths=(16, 32, 32), classes=10) if small else Res2Net()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 224, 224),), ["input"], None
