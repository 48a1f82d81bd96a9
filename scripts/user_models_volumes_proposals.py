"""Five families first run as held-out models (the nineteenth batch); scripts/user_models.py registers
them:

  faster_rcnn         torchvision's Faster R-CNN (MobileNetV3-Large FPN backbone, 320 px): a region
                      proposal network (anchors, box decoding, NonMaxSuppression, TopK), RoIAlign of
                      the proposals over a feature pyramid (multi-scale, levels by box area), a two-
                      layer box head, per-class decoding and NMS; [1,3,320,320] -> boxes [n,4]
  r2plus1d            torchvision's R(2+1)D-18 video classifier: every 3-D convolution factored into a
                      spatial (1x3x3) and a temporal (3x1x1) one with BatchNorm and ReLU between;
                      [1,3,8,112,112] -> [1,400]
  unet3d              a 3-D UNet for volumes (medical segmentation): Conv3d + InstanceNorm3d +
                      LeakyReLU pairs, MaxPool3d down, ConvTranspose3d (kernel 2, stride 2) up, skip
                      Concats; [1,1,32,64,64] -> [1,3,32,64,64]
  char_rnn            a character language model on Elman RNNs: Embedding, two layers of nn.RNN
                      (tanh), a Linear head over the vocabulary; ids [4,64] -> [4,64,96]
  yolov5_focus        a YOLOv5 (v5.0)-style detector: the Focus stem (four strided slices of the image,
                      Slice with steps 2, concatenated), CSP bottlenecks (C3), SPP max pools of 5, 9
                      and 13, a PAN neck and the Detect head's decoding (Sigmoid, grid offsets and
                      anchor scales as constants); [1,3,320,320] -> [1,6300,85]
"""
import torch
import torchvision

from seeded_inputs import random_ids, seeded
from user_models_modern import ConvBnSilu


class FirstImageBoxes(torch.nn.Module):
    """A torchvision detector's boxes for one image given as a batch of one (its list-of-dicts output
    is not an ONNX output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        return self.model([images[0]])[0]["boxes"]


def faster_rcnn(small, batch_norm_statistics):
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None)
    side = 160 if small else 320
    image = torch.rand(1, 3, side, side, generator=torch.Generator().manual_seed(1))
    return FirstImageBoxes(batch_norm_statistics(model)).eval(), (image,), ["images"], None


def r2plus1d(small, batch_norm_statistics):
    model = batch_norm_statistics(torchvision.models.video.r2plus1d_18(weights=None)).eval()
    clip = seeded(1, 3, 4, 32, 32) if small else seeded(1, 3, 8, 112, 112)
    return model, (clip,), ["clip"], None


def _conv_pair(c_in, c_out):
    return torch.nn.Sequential(torch.nn.Conv3d(c_in, c_out, 3, padding=1), torch.nn.InstanceNorm3d(c_out, affine=True), torch.nn.LeakyReLU(0.01),
                               torch.nn.Conv3d(c_out, c_out, 3, padding=1), torch.nn.InstanceNorm3d(c_out, affine=True), torch.nn.LeakyReLU(0.01))


class UNet3d(torch.nn.Module):
    def __init__(self, width=16, levels=3, classes=3):
        super().__init__()
        widths = [width * 2 ** k for k in range(levels + 1)]
        self.down = torch.nn.ModuleList([_conv_pair(1 if k == 0 else widths[k - 1], widths[k]) for k in range(levels)])
        self.bottom = _conv_pair(widths[levels - 1], widths[levels])
        self.up = torch.nn.ModuleList([torch.nn.ConvTranspose3d(widths[k + 1], widths[k], 2, stride=2) for k in reversed(range(levels))])
        self.merge = torch.nn.ModuleList([_conv_pair(2 * widths[k], widths[k]) for k in reversed(range(levels))])
        self.head = torch.nn.Conv3d(width, classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = torch.nn.functional.max_pool3d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def unet3d(small):
    model = UNet3d(width=4, levels=2) if small else UNet3d()
    return model.eval(), (seeded(1, 1, 8, 16, 16) if small else seeded(1, 1, 32, 64, 64),), ["volume"], None


class CharRnn(torch.nn.Module):
    def __init__(self, vocab=96, embed=64, hidden=256, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, embed)
        self.rnn = torch.nn.RNN(embed, hidden, num_layers=layers, nonlinearity="tanh", batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.head(self.rnn(self.embed(ids))[0])


def char_rnn(small):
    model = CharRnn(vocab=16, embed=8, hidden=16) if small else CharRnn()
    vocab = 16 if small else 96
    return model.eval(), (random_ids(vocab, (2, 12) if small else (4, 64), 3),), ["ids"], None


class Focus(torch.nn.Module):
    """YOLOv5's stem: the image's four pixel phases side by side as channels, then a convolution."""

    def __init__(self, c_out):
        super().__init__()
        self.conv = ConvBnSilu(12, c_out, 3)

    def forward(self, x):
        return self.conv(torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], dim=1))


class Bottleneck(torch.nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = ConvBnSilu(c, c, 1), ConvBnSilu(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(torch.nn.Module):
    def __init__(self, c_in, c_out, n=1, shortcut=True):
        super().__init__()
        c = c_out // 2
        self.cv1, self.cv2, self.cv3 = ConvBnSilu(c_in, c), ConvBnSilu(c_in, c), ConvBnSilu(2 * c, c_out)
        self.m = torch.nn.Sequential(*[Bottleneck(c, shortcut) for _ in range(n)])

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], dim=1))


class Spp(torch.nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        c = c_in // 2
        self.cv1, self.cv2 = ConvBnSilu(c_in, c), ConvBnSilu(4 * c, c_out)
        self.pools = torch.nn.ModuleList([torch.nn.MaxPool2d(k, 1, k // 2) for k in (5, 9, 13)])

    def forward(self, x):
        x = self.cv1(x)
        return self.cv2(torch.cat([x] + [pool(x) for pool in self.pools], dim=1))


class Detect(torch.nn.Module):
    """YOLOv5's head at inference: per level and anchor, sigmoid outputs decoded into boxes on the grid."""

    def __init__(self, channels, classes, anchors, strides, sides):
        super().__init__()
        self.outputs, self.anchors_per_level = classes + 5, len(anchors[0]) // 2
        self.convs = torch.nn.ModuleList([torch.nn.Conv2d(c, self.anchors_per_level * self.outputs, 1) for c in channels])
        self.strides = strides
        for level, side in enumerate(sides):
            ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
            self.register_buffer(f"grid{level}", torch.stack((xs, ys), 2).view(1, 1, side, side, 2).float() - 0.5, persistent=False)
            scale = torch.tensor(anchors[level], dtype=torch.float32).view(1, self.anchors_per_level, 1, 1, 2)
            self.register_buffer(f"anchor{level}", scale, persistent=False)

    def forward(self, features):
        decoded = []
        for level, (conv, x) in enumerate(zip(self.convs, features)):
            b, _, h, w = x.shape
            y = conv(x).view(b, self.anchors_per_level, self.outputs, h, w).permute(0, 1, 3, 4, 2).sigmoid()
            xy = (y[..., 0:2] * 2 + getattr(self, f"grid{level}")) * self.strides[level]
            wh = (y[..., 2:4] * 2) ** 2 * getattr(self, f"anchor{level}")
            decoded.append(torch.cat((xy, wh, y[..., 4:]), -1).view(b, -1, self.outputs))
        return torch.cat(decoded, 1)


class YoloV5(torch.nn.Module):
    ANCHORS = ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326])

    def __init__(self, side=320, width=(16, 32, 64, 128, 256), depth=(1, 2, 3, 1), classes=80):
        super().__init__()
        w = width
        self.stem = Focus(w[0])
        self.stage2 = torch.nn.Sequential(ConvBnSilu(w[0], w[1], 3, 2), C3(w[1], w[1], depth[0]))
        self.stage3 = torch.nn.Sequential(ConvBnSilu(w[1], w[2], 3, 2), C3(w[2], w[2], depth[1]))
        self.stage4 = torch.nn.Sequential(ConvBnSilu(w[2], w[3], 3, 2), C3(w[3], w[3], depth[2]))
        self.stage5 = torch.nn.Sequential(ConvBnSilu(w[3], w[4], 3, 2), Spp(w[4], w[4]), C3(w[4], w[4], depth[3], shortcut=False))
        self.reduce5, self.merge4 = ConvBnSilu(w[4], w[3]), C3(2 * w[3], w[3], 1, False)
        self.reduce4, self.merge3 = ConvBnSilu(w[3], w[2]), C3(2 * w[2], w[2], 1, False)
        self.down3, self.pan4 = ConvBnSilu(w[2], w[2], 3, 2), C3(2 * w[2], w[3], 1, False)
        self.down4, self.pan5 = ConvBnSilu(w[3], w[3], 3, 2), C3(2 * w[3], w[4], 1, False)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.detect = Detect((w[2], w[3], w[4]), classes, self.ANCHORS, (8, 16, 32), (side // 8, side // 16, side // 32))

    def forward(self, x):
        c3 = self.stage3(self.stage2(self.stem(x)))
        c4 = self.stage4(c3)
        c5 = self.stage5(c4)
        p5 = self.reduce5(c5)
        p4 = self.merge4(torch.cat([self.up(p5), c4], 1))
        r4 = self.reduce4(p4)
        n3 = self.merge3(torch.cat([self.up(r4), c3], 1))
        n4 = self.pan4(torch.cat([self.down3(n3), r4], 1))
        n5 = self.pan5(torch.cat([self.down4(n4), p5], 1))
        return self.detect([n3, n4, n5])


def yolov5_focus(small, batch_norm_statistics):
    model = YoloV5(side=64, width=(4, 8, 16, 32, 64), depth=(1, 1, 1, 1), classes=4) if small else YoloV5()
    image = torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(1)) if small else torch.rand(1, 3, 320, 320, generator=torch.Generator().manual_seed(1))
    return batch_norm_statistics(model).eval(), (image,), ["images"], None
