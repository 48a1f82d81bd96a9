"""Four more families users bring, built from torch.nn (scripts/user_models.py registers them):

  convnext            ConvNeXt-style CNN: a 4x4 stride-4 patchify stem, stages of 7x7 depthwise
                      convolutions, LayerNorm over channels-last (permutes around it), Linear 4x
                      expansions with GELU, layer scale, 2x2 stride-2 downsampling; [1,3,224,224]
  conformer           a Conformer speech encoder: a Conv2d subsampling front-end, 4 blocks of half-step
                      feed-forwards (SiLU), multi-head self-attention, a convolution module (pointwise
                      Conv1d, GLU, 31-wide depthwise Conv1d, BatchNorm, SiLU), LayerNorm;
                      [1,1,200,80] log-mel frames -> [1,49,128] log-probabilities
  vae_decoder         a latent-diffusion VAE decoder: GroupNorm + SiLU residual blocks (1x1 skips where
                      channels change), nearest 2x upsampling with a 3x3 Conv; latent [1,4,32,32] ->
                      [1,3,128,128]
  deeplab             DeepLabV3-style segmentation: torchvision's MobileNetV3-Large features, an ASPP
                      head (1x1 and dilated 3x3 convolutions at rates 6, 12, 18, image pooling with a
                      bilinear Resize back), a classifier, bilinear Resize to the input; [1,3,256,256]
"""
import torch
import torch.nn.functional as F
import torchvision


class ChannelsFirstLayerNorm(torch.nn.Module):
    """ConvNeXt's LayerNorm of NCHW over C, as its reference code writes it: permute, norm, permute."""

    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.norm = torch.nn.LayerNorm(channels, eps=eps)

    def forward(self, x):
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvBnSilu(torch.nn.Sequential):
    """The YOLO detectors' convolution: Conv2d (same padding, no bias), BatchNorm, SiLU."""

    def __init__(self, cin, cout, kernel=1, stride=1):
        super().__init__(torch.nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.SiLU())


class ConvNeXtBlock(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.depthwise = torch.nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = torch.nn.LayerNorm(channels, eps=1e-6)
        self.expand, self.project = torch.nn.Linear(channels, 4 * channels), torch.nn.Linear(4 * channels, channels)
        self.scale = torch.nn.Parameter(torch.full((channels,), 0.1))

    def forward(self, x):
        y = self.depthwise(x).permute(0, 2, 3, 1)
        y = self.project(F.gelu(self.expand(self.norm(y)))) * self.scale
        return x + y.permute(0, 3, 1, 2)


class ConvNeXt(torch.nn.Module):
    def __init__(self, dims=(48, 96, 192, 384), depths=(2, 2, 4, 2), classes=100):
        super().__init__()
        layers = [torch.nn.Conv2d(3, dims[0], 4, stride=4), ChannelsFirstLayerNorm(dims[0])]
        for i, (width, depth) in enumerate(zip(dims, depths)):
            if i:
                layers += [ChannelsFirstLayerNorm(dims[i - 1]), torch.nn.Conv2d(dims[i - 1], width, 2, stride=2)]
            layers += [ConvNeXtBlock(width) for _ in range(depth)]
        self.features = torch.nn.Sequential(*layers)
        self.norm, self.head = torch.nn.LayerNorm(dims[-1]), torch.nn.Linear(dims[-1], classes)

    def forward(self, x):
        return self.head(self.norm(self.features(x).mean((2, 3))))


class ConformerBlock(torch.nn.Module):
    def __init__(self, d_model, heads, kernel):
        super().__init__()

        def feed_forward():
            return torch.nn.Sequential(torch.nn.LayerNorm(d_model), torch.nn.Linear(d_model, 4 * d_model), torch.nn.SiLU(), torch.nn.Linear(4 * d_model, d_model))

        self.ff1, self.ff2 = feed_forward(), feed_forward()
        self.attention_norm = torch.nn.LayerNorm(d_model)
        self.attention = torch.nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.conv_norm = torch.nn.LayerNorm(d_model)
        self.pointwise1 = torch.nn.Conv1d(d_model, 2 * d_model, 1)
        self.depthwise = torch.nn.Conv1d(d_model, d_model, kernel, padding=kernel // 2, groups=d_model)
        self.batch_norm = torch.nn.BatchNorm1d(d_model)
        self.pointwise2 = torch.nn.Conv1d(d_model, d_model, 1)
        self.norm = torch.nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        a = self.attention_norm(x)
        x = x + self.attention(a, a, a, need_weights=False)[0]
        c = F.glu(self.pointwise1(self.conv_norm(x).transpose(1, 2)), dim=1)
        x = x + self.pointwise2(F.silu(self.batch_norm(self.depthwise(c)))).transpose(1, 2)
        return self.norm(x + 0.5 * self.ff2(x))


class Conformer(torch.nn.Module):
    def __init__(self, mels=80, front=64, d_model=144, heads=4, kernel=31, blocks=4, vocab=128):
        super().__init__()
        self.subsample = torch.nn.Sequential(torch.nn.Conv2d(1, front, 3, stride=2), torch.nn.ReLU(), torch.nn.Conv2d(front, front, 3, stride=2), torch.nn.ReLU())
        features = ((mels - 3) // 2 + 1 - 3) // 2 + 1
        self.project = torch.nn.Linear(front * features, d_model)
        self.blocks = torch.nn.Sequential(*[ConformerBlock(d_model, heads, kernel) for _ in range(blocks)])
        self.out = torch.nn.Linear(d_model, vocab)

    def forward(self, mel):  # [1, 1, frames, mels]
        y = self.subsample(mel)
        batch, channels, frames, features = y.shape
        y = self.project(y.permute(0, 2, 1, 3).reshape(batch, frames, channels * features))
        return F.log_softmax(self.out(self.blocks(y)), -1)


class GroupNormResBlock(torch.nn.Module):
    def __init__(self, cin, cout, groups):
        super().__init__()
        self.norm1, self.conv1 = torch.nn.GroupNorm(groups, cin), torch.nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2, self.conv2 = torch.nn.GroupNorm(groups, cout), torch.nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = torch.nn.Conv2d(cin, cout, 1) if cin != cout else torch.nn.Identity()

    def forward(self, x):
        return self.skip(x) + self.conv2(F.silu(self.norm2(self.conv1(F.silu(self.norm1(x))))))


class VaeDecoder(torch.nn.Module):
    def __init__(self, latent=4, channels=(256, 256, 128, 64), groups=32):
        super().__init__()
        self.conv_in = torch.nn.Conv2d(latent, channels[0], 3, padding=1)
        self.middle = GroupNormResBlock(channels[0], channels[0], groups)
        self.blocks = torch.nn.ModuleList([GroupNormResBlock(a, b, groups) for a, b in zip(channels, channels[1:])])
        self.upsample_convs = torch.nn.ModuleList([torch.nn.Conv2d(c, c, 3, padding=1) for c in channels[1:-1]])
        self.norm_out, self.conv_out = torch.nn.GroupNorm(groups, channels[-1]), torch.nn.Conv2d(channels[-1], 3, 3, padding=1)

    def forward(self, z):
        x = self.middle(self.conv_in(z))
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i < len(self.upsample_convs):
                x = self.upsample_convs[i](F.interpolate(x, scale_factor=2.0, mode="nearest"))
        return self.conv_out(F.silu(self.norm_out(x)))


class Aspp(torch.nn.Module):
    def __init__(self, cin, cout, rates=(6, 12, 18)):
        super().__init__()

        def conv_bn_relu(kernel, rate):
            return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, kernel, padding=rate if kernel > 1 else 0, dilation=rate, bias=False),
                                       torch.nn.BatchNorm2d(cout), torch.nn.ReLU())

        self.branches = torch.nn.ModuleList([conv_bn_relu(1, 1)] + [conv_bn_relu(3, r) for r in rates])
        self.pool = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Conv2d(cin, cout, 1), torch.nn.ReLU())
        self.project = torch.nn.Sequential(torch.nn.Conv2d((len(rates) + 2) * cout, cout, 1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU())

    def forward(self, x):
        pooled = F.interpolate(self.pool(x), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return self.project(torch.cat([b(x) for b in self.branches] + [pooled], 1))


class DeepLab(torch.nn.Module):
    def __init__(self, small=False, classes=21):
        super().__init__()
        backbone = torchvision.models.mobilenet_v3_small(weights=None) if small else torchvision.models.mobilenet_v3_large(weights=None)
        self.backbone = backbone.features[:9] if small else backbone.features[:16]
        channels = [m for m in self.backbone.modules() if isinstance(m, torch.nn.Conv2d)][-1].out_channels
        self.aspp = Aspp(channels, 16 if small else 128, rates=(2, 4, 6) if small else (6, 12, 18))
        self.classifier = torch.nn.Conv2d(16 if small else 128, classes, 1)

    def forward(self, x):
        y = self.classifier(self.aspp(self.backbone(x)))
        return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)
