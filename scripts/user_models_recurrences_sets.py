"""Eight families first run as held-out models (the sixteenth batch); scripts/user_models.py registers
them:

  rwkv                an RWKV-4 language model over a prompt: token shift by a Pad that crops (a
                      negative pad), time mixing with the WKV recurrence unrolled over the 32 tokens
                      in its numerically safe form (Max, Exp, running sums), squared-ReLU channel
                      mixing, LayerNorms; ids [1,32] -> logits [1,32,1000]
  bilstm_crf          a BiLSTM-CRF tagger: embeddings, a bidirectional LSTM, tag emissions, Viterbi
                      decoding unrolled over 48 tokens (the best previous tag by ReduceMax and ArgMax
                      over a [tags,tags] table per step) and the back-tracked path by GatherElements;
                      ids [1,48] -> tags [1,48] (int64) and the best score
  set_transformer     a Set Transformer: induced set attention blocks (torch.nn.MultiheadAttention,
                      batch_first, 32 inducing points) and pooling by attention to one learned seed;
                      4 sets of 512 points of dimension 3 -> [4,40]
  arcface             an ArcFace face-embedding network and its margin head: IR residual blocks
                      (BatchNorm, PReLU), an embedding normalized by ReduceL2, the cosine to each
                      class's normalized weight, the angle by Acos, the label's margin added by
                      OneHot; [2,3,112,112] and labels [2] -> logits [2,500] and the embedding
  deepfm              DeepFM click-through prediction: 26 categorical fields in one embedding table
                      (ids offset per field, Gather), a factorization machine's pairwise term
                      ((sum)^2 - sum of squares), a 3-layer MLP beside it; batch 512 -> [512,1]
  midas_lite          a MiDaS-style depth network: a residual encoder of four stages, feature fusion
                      blocks (residual conv units) joined top-down by bilinear Resize with
                      align_corners, a head upsampling to the input's size; [1,3,256,256] -> [1,256,256]
  realnvp             RealNVP normalizing flow: affine coupling layers with checkerboard masks and
                      tanh-bounded scales (Exp), a squeeze (6-D Reshape and Transpose), channel-wise
                      couplings, the log-determinant summed; batch 8 x [3,32,32] -> z and [8]
  sam_decoder         a Segment-Anything-style mask decoder: point prompts and the image grid encoded
                      by random Fourier features (MatMul, Sin, Cos), a two-way transformer (token self-
                      attention, token-to-image and image-to-token cross-attention over 4096 image
                      tokens), ConvTranspose upscaling with a channel LayerNorm and GELU, masks from
                      hypernetwork MLPs; embeddings [1,256,64,64] and 2 points -> [1,4,256,256], [1,4]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class RwkvBlock(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        generator = torch.Generator().manual_seed(3)
        self.time_decay = torch.nn.Parameter(torch.rand(d, generator=generator) - 0.5)
        self.time_first = torch.nn.Parameter(torch.rand(d, generator=generator) * 0.5)
        self.time_mix = torch.nn.Parameter(torch.rand(3, d, generator=generator))  # k, v, r
        self.channel_mix = torch.nn.Parameter(torch.rand(2, d, generator=generator))  # k, r
        self.key, self.value, self.receptance = (torch.nn.Linear(d, d, bias=False) for _ in range(3))
        self.output = torch.nn.Linear(d, d, bias=False)
        self.ffn_key, self.ffn_receptance = torch.nn.Linear(d, hidden, bias=False), torch.nn.Linear(d, d, bias=False)
        self.ffn_value = torch.nn.Linear(hidden, d, bias=False)
        self.shift = torch.nn.ZeroPad2d((0, 0, 1, -1))  # the previous token's features, zeros first

    def mix(self, x, weight):
        return x * weight + self.shift(x) * (1 - weight)

    def time_mixing(self, x):
        k, v = self.key(self.mix(x, self.time_mix[0])), self.value(self.mix(x, self.time_mix[1]))
        r = torch.sigmoid(self.receptance(self.mix(x, self.time_mix[2])))
        w, u = -torch.exp(self.time_decay), self.time_first
        aa = torch.zeros_like(k[:, 0])
        bb = torch.zeros_like(k[:, 0])
        pp = torch.full_like(k[:, 0], -1e38)
        outputs = []
        for t in range(x.shape[1]):
            kt, vt = k[:, t], v[:, t]
            ww = u + kt
            p = torch.maximum(pp, ww)
            e1, e2 = torch.exp(pp - p), torch.exp(ww - p)
            outputs.append((e1 * aa + e2 * vt) / (e1 * bb + e2))
            ww = pp + w
            p = torch.maximum(ww, kt)
            e1, e2 = torch.exp(ww - p), torch.exp(kt - p)
            aa, bb, pp = e1 * aa + e2 * vt, e1 * bb + e2, p
        return self.output(r * torch.stack(outputs, 1))

    def channel_mixing(self, x):
        k = torch.square(torch.relu(self.ffn_key(self.mix(x, self.channel_mix[0]))))
        return torch.sigmoid(self.ffn_receptance(self.mix(x, self.channel_mix[1]))) * self.ffn_value(k)

    def forward(self, x):
        x = x + self.time_mixing(self.ln1(x))
        return x + self.channel_mixing(self.ln2(x))


class Rwkv(torch.nn.Module):
    def __init__(self, vocab=1000, d=256, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.ln0, self.ln_out = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.blocks = torch.nn.ModuleList(RwkvBlock(d, 4 * d) for _ in range(layers))
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.ln0(self.embed(ids))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_out(x))


class BiLstmCrf(torch.nn.Module):
    def __init__(self, vocab=5000, d=128, hidden=128, tags=9):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.lstm = torch.nn.LSTM(d, hidden, batch_first=True, bidirectional=True)
        self.emit = torch.nn.Linear(2 * hidden, tags)
        generator = torch.Generator().manual_seed(4)
        self.transitions = torch.nn.Parameter(torch.randn(tags, tags, generator=generator))
        self.start, self.end = torch.nn.Parameter(torch.randn(tags, generator=generator)), torch.nn.Parameter(torch.randn(tags, generator=generator))

    def forward(self, ids):
        emissions = self.emit(self.lstm(self.embed(ids))[0])  # [B, T, tags]
        score = self.start + emissions[:, 0]
        history = []
        for t in range(1, emissions.shape[1]):
            candidates = score.unsqueeze(2) + self.transitions.unsqueeze(0) + emissions[:, t].unsqueeze(1)  # [B, previous, next]
            score, best_previous = candidates.max(dim=1)
            history.append(best_previous)
        score = score + self.end
        best = score.argmax(dim=1, keepdim=True)
        path = [best]
        for best_previous in reversed(history):
            best = best_previous.gather(1, best)
            path.append(best)
        return torch.cat(path[::-1], 1), score.max(dim=1)[0]


class InducedSetAttention(torch.nn.Module):
    def __init__(self, d, heads, inducing):
        super().__init__()
        self.inducing = torch.nn.Parameter(seeded(1, inducing, d) * 0.1)
        self.to_inducing = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.from_inducing = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(4))
        self.ffns = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU()) for _ in range(2))

    def block(self, attention, q, kv, i):  # the Set Transformer's MAB: attention, then a feed-forward, each with a norm
        h = self.norms[2 * i](q + attention(q, kv, kv, need_weights=False)[0])
        return self.norms[2 * i + 1](h + self.ffns[i](h))

    def forward(self, x):
        h = self.block(self.to_inducing, self.inducing.expand(x.shape[0], -1, -1), x, 0)
        return self.block(self.from_inducing, x, h, 1)


class SetTransformer(torch.nn.Module):
    def __init__(self, features=3, d=128, heads=4, inducing=32, blocks=2, classes=40):
        super().__init__()
        self.embed = torch.nn.Linear(features, d)
        self.encoder = torch.nn.Sequential(*(InducedSetAttention(d, heads, inducing) for _ in range(blocks)))
        self.seed = torch.nn.Parameter(seeded(1, 1, d) * 0.1)
        self.pool = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, points):
        x = self.encoder(self.embed(points))
        pooled = self.pool(self.seed.expand(x.shape[0], -1, -1), x, x, need_weights=False)[0]
        return self.head(pooled.squeeze(1))


class IrBlock(torch.nn.Module):  # ArcFace's improved residual unit
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.BatchNorm2d(cin), torch.nn.Conv2d(cin, cout, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(cout),
                                        torch.nn.PReLU(cout), torch.nn.Conv2d(cout, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout))
        self.shortcut = (torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else torch.nn.Identity())

    def forward(self, x):
        return self.body(x) + self.shortcut(x)


class ArcFace(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), size=112, embedding=256, classes=500, scale=64.0, margin=0.5):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), torch.nn.BatchNorm2d(widths[0]), torch.nn.PReLU(widths[0]))
        blocks, cin = [], widths[0]
        for w in widths:
            blocks += [IrBlock(cin, w, 2), IrBlock(w, w, 1)]
            cin = w
        self.blocks = torch.nn.Sequential(*blocks)
        side = size // 2 ** len(widths)
        self.neck = torch.nn.Sequential(torch.nn.BatchNorm2d(cin), torch.nn.Flatten(), torch.nn.Linear(cin * side * side, embedding), torch.nn.BatchNorm1d(embedding))
        self.weight = torch.nn.Parameter(seeded(classes, embedding) * 0.05)
        self.scale, self.margin, self.classes = scale, margin, classes

    def forward(self, images, labels):
        embedding = F.normalize(self.neck(self.blocks(self.stem(images))))
        cosine = torch.clamp(embedding @ F.normalize(self.weight).t(), -1 + 1e-6, 1 - 1e-6)
        target = torch.cos(torch.acos(cosine) + self.margin)
        chosen = F.one_hot(labels, self.classes).to(cosine.dtype)
        return self.scale * (chosen * target + (1 - chosen) * cosine), embedding


class DeepFm(torch.nn.Module):
    def __init__(self, fields=26, rows=1000, dense=13, d=16, hidden=400):
        super().__init__()
        self.register_buffer("offsets", torch.arange(fields) * rows)
        self.embed = torch.nn.Embedding(fields * rows, d)
        self.linear = torch.nn.Embedding(fields * rows, 1)
        self.dense = torch.nn.Linear(dense, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear((fields + 1) * d, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
        with torch.no_grad():  # embeddings as small as trained ones, so the click probabilities are not saturated
            self.embed.weight.mul_(0.05)
            self.linear.weight.mul_(0.05)

    def forward(self, ids, dense):
        ids = ids + self.offsets
        e = torch.cat([self.embed(ids), self.dense(dense).unsqueeze(1)], 1)  # [B, fields + 1, d]
        pairwise = 0.5 * (e.sum(1).pow(2) - e.pow(2).sum(1)).sum(1, keepdim=True)
        first_order = self.linear(ids).sum(1)
        return torch.sigmoid(first_order + pairwise + self.mlp(e.flatten(1)))


class ResidualConvUnit(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.conv2 = torch.nn.Conv2d(c, c, 3, 1, 1), torch.nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(torch.relu(x))))


class FusionBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip_unit, self.unit = ResidualConvUnit(c), ResidualConvUnit(c)
        self.project = torch.nn.Conv2d(c, c, 1)

    def forward(self, x, skip=None):
        if skip is not None:
            x = x + self.skip_unit(skip)
        x = F.interpolate(self.unit(x), scale_factor=2, mode="bilinear", align_corners=True)
        return self.project(x)


class MidasLite(torch.nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), features=64):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), torch.nn.BatchNorm2d(widths[0]), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        stages, cin = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            stages.append(torch.nn.Sequential(torch.nn.Conv2d(cin, w, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(w), torch.nn.ReLU(),
                                              torch.nn.Conv2d(w, w, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(w), torch.nn.ReLU()))
            cin = w
        self.stages = torch.nn.ModuleList(stages)
        self.reassemble = torch.nn.ModuleList(torch.nn.Conv2d(w, features, 3, 1, 1, bias=False) for w in widths)
        self.fusions = torch.nn.ModuleList(FusionBlock(features) for _ in widths)
        self.head = torch.nn.Sequential(torch.nn.Conv2d(features, features // 2, 3, 1, 1), torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                                        torch.nn.Conv2d(features // 2, 32, 3, 1, 1), torch.nn.ReLU(), torch.nn.Conv2d(32, 1, 1), torch.nn.ReLU())
        with torch.no_grad():  # a depth offset, so that the untrained map is not all clipped to 0
            self.head[4].bias.fill_(0.5)

    def forward(self, image):
        x, layers = self.stem(image), []
        for stage, reassemble in zip(self.stages, self.reassemble):
            x = stage(x)
            layers.append(reassemble(x))
        path = self.fusions[-1](layers[-1])
        for fusion, layer in zip(reversed(self.fusions[:-1]), reversed(layers[:-1])):
            path = fusion(path, layer)
        return self.head(path).squeeze(1)


class CouplingNet(torch.nn.Module):  # s and t of an affine coupling, the scale bounded by tanh
    def __init__(self, cin, width, blocks):
        super().__init__()
        self.inp = torch.nn.Conv2d(cin, width, 3, 1, 1)
        self.blocks = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.BatchNorm2d(width), torch.nn.ReLU(), torch.nn.Conv2d(width, width, 3, 1, 1)) for _ in range(blocks))
        self.out = torch.nn.Conv2d(width, 2 * cin, 3, 1, 1)
        self.scale = torch.nn.Parameter(torch.ones(1, cin, 1, 1))

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        s, t = self.out(torch.relu(h)).chunk(2, 1)
        return self.scale * torch.tanh(s), t


class CheckerboardCoupling(torch.nn.Module):
    def __init__(self, c, size, width, blocks, parity):
        super().__init__()
        ys, xs = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
        self.register_buffer("mask", ((ys + xs + parity) % 2).float().view(1, 1, size, size))
        self.net = CouplingNet(c, width, blocks)

    def forward(self, x, logdet):
        s, t = self.net(x * self.mask)
        s, t = s * (1 - self.mask), t * (1 - self.mask)
        return x * torch.exp(s) + t, logdet + s.flatten(1).sum(1)


class ChannelCoupling(torch.nn.Module):
    def __init__(self, c, width, blocks, flip):
        super().__init__()
        self.net, self.flip = CouplingNet(c // 2, width, blocks), flip

    def forward(self, x, logdet):
        kept, changed = x.chunk(2, 1)
        if self.flip:
            kept, changed = changed, kept
        s, t = self.net(kept)
        changed = changed * torch.exp(s) + t
        return torch.cat([changed, kept] if self.flip else [kept, changed], 1), logdet + s.flatten(1).sum(1)


def squeeze2x2(x):
    b, c, h, w = x.shape
    return x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, 4 * c, h // 2, w // 2)


class RealNvp(torch.nn.Module):
    def __init__(self, c=3, size=32, width=64, blocks=2):
        super().__init__()
        self.checkers = torch.nn.ModuleList(CheckerboardCoupling(c, size, width, blocks, i % 2) for i in range(3))
        self.channels = torch.nn.ModuleList(ChannelCoupling(4 * c, width, blocks, i % 2 == 1) for i in range(3))
        self.final = torch.nn.ModuleList(CheckerboardCoupling(4 * c, size // 2, width, blocks, i % 2) for i in range(2))

    def forward(self, x):
        logdet = torch.zeros_like(x[:, 0, 0, 0])
        for layer in self.checkers:
            x, logdet = layer(x, logdet)
        x = squeeze2x2(x)
        for layer in list(self.channels) + list(self.final):
            x, logdet = layer(x, logdet)
        return x, logdet


class DownsampledAttention(torch.nn.Module):  # SAM's attention: projections to a smaller width, heads
    def __init__(self, d, heads, downsample=1):
        super().__init__()
        inner = d // downsample
        self.q, self.k, self.v = torch.nn.Linear(d, inner), torch.nn.Linear(d, inner), torch.nn.Linear(d, inner)
        self.out, self.heads = torch.nn.Linear(inner, d), heads

    def split(self, x):
        b, n, c = x.shape
        return x.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, q, k, v):
        q, k, v = self.split(self.q(q)), self.split(self.k(k)), self.split(self.v(v))
        attention = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(q.shape[-1]), -1)
        o = (attention @ v).transpose(1, 2)
        return self.out(o.reshape(o.shape[0], o.shape[1], -1))


class TwoWayBlock(torch.nn.Module):
    def __init__(self, d, heads, hidden, first):
        super().__init__()
        self.self_attention = DownsampledAttention(d, heads)
        self.token_to_image, self.image_to_token = DownsampledAttention(d, heads, 2), DownsampledAttention(d, heads, 2)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(4))
        self.first = first

    def forward(self, queries, keys, query_pe, key_pe):
        if self.first:  # the first block's self-attention replaces the queries (no positional term)
            queries = self.norms[0](self.self_attention(queries, queries, queries))
        else:
            q = queries + query_pe
            queries = self.norms[0](queries + self.self_attention(q, q, queries))
        queries = self.norms[1](queries + self.token_to_image(queries + query_pe, keys + key_pe, keys))
        queries = self.norms[2](queries + self.mlp(queries))
        keys = self.norms[3](keys + self.image_to_token(keys + key_pe, queries + query_pe, queries))
        return queries, keys


class SamMaskDecoder(torch.nn.Module):
    def __init__(self, d=256, grid=64, heads=8, hidden=2048, layers=2, masks=4, upscaled=32, image_size=1024):
        super().__init__()
        self.gaussian = torch.nn.Parameter(seeded(2, d // 2))  # random Fourier features of [0,1] coordinates
        line = (torch.arange(grid, dtype=torch.float32) + 0.5) / grid
        ys, xs = torch.meshgrid(line, line, indexing="ij")
        self.register_buffer("grid", torch.stack([xs, ys], -1).reshape(grid * grid, 2))
        self.point_embeddings = torch.nn.Parameter(seeded(2, d) * 0.1)  # background, foreground
        self.no_mask = torch.nn.Parameter(seeded(d) * 0.1)
        self.tokens = torch.nn.Parameter(seeded(1 + masks, d) * 0.1)  # the IoU token, then the mask tokens
        self.blocks = torch.nn.ModuleList(TwoWayBlock(d, heads, hidden, i == 0) for i in range(layers))
        self.final_attention, self.final_norm = DownsampledAttention(d, heads, 2), torch.nn.LayerNorm(d)
        self.up1, self.up2 = torch.nn.ConvTranspose2d(d, 2 * upscaled, 2, 2), torch.nn.ConvTranspose2d(2 * upscaled, upscaled, 2, 2)
        self.channel_norm_weight, self.channel_norm_bias = torch.nn.Parameter(torch.ones(2 * upscaled)), torch.nn.Parameter(torch.zeros(2 * upscaled))
        self.hypernetworks = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, upscaled))
                                                 for _ in range(masks))
        self.iou_head = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, masks))
        self.d, self.gridsize, self.masks, self.image_size = d, grid, masks, image_size

    def fourier(self, coordinates):  # [..., 2] in [0, 1] -> [..., d]
        projected = (2 * coordinates - 1) @ self.gaussian * (2 * math.pi)
        return torch.cat([torch.sin(projected), torch.cos(projected)], -1)

    def channel_norm(self, x):  # SAM's LayerNorm2d
        mean = x.mean(1, keepdim=True)
        variance = (x - mean).pow(2).mean(1, keepdim=True)
        x = (x - mean) / torch.sqrt(variance + 1e-6)
        return self.channel_norm_weight[:, None, None] * x + self.channel_norm_bias[:, None, None]

    def forward(self, image_embeddings, point_coords, point_labels):
        b = image_embeddings.shape[0]
        labels = point_labels.unsqueeze(-1)
        sparse = self.fourier((point_coords + 0.5) / self.image_size) + labels * self.point_embeddings[1] + (1 - labels) * self.point_embeddings[0]
        queries = torch.cat([self.tokens.unsqueeze(0).expand(b, -1, -1), sparse], 1)
        keys = (image_embeddings + self.no_mask.view(1, -1, 1, 1)).flatten(2).transpose(1, 2)
        key_pe = self.fourier(self.grid).unsqueeze(0)
        query_pe = queries
        for block in self.blocks:
            queries, keys = block(queries, keys, query_pe, key_pe)
        queries = self.final_norm(queries + self.final_attention(queries + query_pe, keys + key_pe, keys))
        image = keys.transpose(1, 2).reshape(b, self.d, self.gridsize, self.gridsize)
        upscaled = F.gelu(self.up2(F.gelu(self.channel_norm(self.up1(image)))))
        hyper = torch.stack([net(queries[:, 1 + i]) for i, net in enumerate(self.hypernetworks)], 1)  # [B, masks, upscaled]
        c, h, w = upscaled.shape[1:]
        masks = (hyper @ upscaled.reshape(b, c, h * w)).reshape(b, self.masks, h, w)
        return masks, self.iou_head(queries[:, 0])


def rwkv(small):
    model = Rwkv(vocab=50, d=16, layers=1) if small else Rwkv()
    return model.eval(), (random_ids(50 if small else 1000, (1, 6 if small else 32), 1),), ["ids"], None


def bilstm_crf(small):
    model = BiLstmCrf(vocab=50, d=8, hidden=8, tags=5) if small else BiLstmCrf()
    return model.eval(), (random_ids(50 if small else 5000, (1, 7 if small else 48), 1),), ["ids"], None


def set_transformer(small):
    model = SetTransformer(d=16, heads=2, inducing=4, blocks=1, classes=5) if small else SetTransformer()
    return model.eval(), (seeded(2, 20, 3) if small else seeded(4, 512, 3),), ["points"], None


def arcface(small, batch_norm_statistics):
    model = ArcFace(widths=(8, 16), size=32, embedding=16, classes=10) if small else ArcFace()
    images = seeded(2, 3, 32, 32) if small else seeded(2, 3, 112, 112)
    return batch_norm_statistics(model).eval(), (images, random_ids(10 if small else 500, (2,), 2)), ["images", "labels"], None


def deepfm(small):
    model = DeepFm(fields=4, rows=20, dense=3, d=4, hidden=16) if small else DeepFm()
    batch, fields, rows, dense = (8, 4, 20, 3) if small else (512, 26, 1000, 13)
    return model.eval(), (random_ids(rows, (batch, fields), 3), seeded(batch, dense)), ["ids", "dense"], None


def midas_lite(small, batch_norm_statistics):
    model = MidasLite(widths=(8, 16), features=8) if small else MidasLite()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 256, 256),), ["image"], None


def realnvp(small, batch_norm_statistics):
    model = RealNvp(size=8, width=8, blocks=1) if small else RealNvp()
    return batch_norm_statistics(model).eval(), (seeded(2, 3, 8, 8) if small else seeded(8, 3, 32, 32),), ["images"], None


def sam_decoder(small):
    if small:
        model, d, grid, image_size = SamMaskDecoder(d=16, grid=8, heads=2, hidden=32, layers=1, masks=2, upscaled=4, image_size=128), 16, 8, 128
    else:
        model, d, grid, image_size = SamMaskDecoder(), 256, 64, 1024
    coords = torch.tensor([[[0.3, 0.6], [0.7, 0.2]]]) * image_size
    return model.eval(), (seeded(1, d, grid, grid), coords, torch.tensor([[1.0, 0.0]])), ["image_embeddings", "point_coords", "point_labels"], None
