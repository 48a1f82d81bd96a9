"""Eight families first run as held-out models (the fourteenth batch); scripts/user_models.py registers
them:

  mamba2              a Mamba-2-style language model: token embedding, blocks of RMSNorm, an input
                      projection split into x, z, B, C and dt, a causal depthwise Conv1d with SiLU, the
                      state-space duality form of the selective scan (softplus(dt), a per-head decay
                      from CumSum and Exp, a lower-triangular mask, C B^T products), a gated RMSNorm and
                      an output projection; [1,256] ids -> [1,256,2000]
  condconv            CondConv: each convolution's kernel is a sample-dependent mix of expert kernels
                      (a sigmoid router over the pooled input, a MatMul of its weights with the experts),
                      so the Conv nodes take weights computed at run time, BatchNorm after them;
                      [1,3,128,128] -> [1,1000]
  wavenet             WaveNet: a causal input Conv1d, two stacks of ten dilated causal Conv1d layers
                      (dilation 1..512) with the gated tanh * sigmoid activation, residual and skip 1x1
                      convolutions, the skips summed, ReLU, 1x1, a log-softmax over 256 mu-law classes;
                      [1,1,4000] -> [1,256,4000]
  tabnet              TabNet: an input BatchNorm, three decision steps of GLU feature transformers and
                      an attentive transformer whose sparsemax sorts (TopK), takes a CumSum, counts the
                      support and gathers the threshold (GatherElements); batch 1024 x 54 -> [1024,7]
  siren               SIREN: a coordinate MLP of sin(30 (W x + b)) layers over a 256x256 grid;
                      [65536,2] -> [65536,3]
  gqa_decoder         a decode step of a LLaMA-style decoder with grouped-query attention (8 query heads
                      share 2 key/value heads, expanded by Expand and Reshape), rotary positions, a KV
                      cache of 255 steps, RMSNorm and SwiGLU; ids [1,1] and caches -> logits and caches
  tacotron_step       one Tacotron-2 decoder step: a prenet, an attention LSTM cell, location-sensitive
                      attention (a Conv1d over the previous and cumulative weights, tanh energies,
                      softmax, the context by MatMul), a decoder LSTM cell and the mel and stop
                      projections; 11 state inputs -> 7 outputs
  informer            an Informer-style forecaster: ProbSparse self-attention (keys sampled at export,
                      the top queries by max - mean through TopK, their scores Gathered, the rest given
                      the mean of V, written back by ScatterND), distilling layers of circular Conv1d
                      (the padding as a Concat), BatchNorm, ELU and a strided MaxPool1d; [1,96,7] -> [1,24,7]
"""
import math

import torch
import torch.nn.functional as F

from seeded_inputs import random_ids, seeded


class RmsNorm(torch.nn.Module):
    def __init__(self, width, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Mamba2Block(torch.nn.Module):
    def __init__(self, d, heads, head_dim, state, kernel=4):
        super().__init__()
        self.heads, self.head_dim, self.state = heads, head_dim, state
        inner = heads * head_dim
        self.norm = RmsNorm(d)
        self.project_in = torch.nn.Linear(d, 2 * inner + 2 * state + heads, bias=False)
        self.conv = torch.nn.Conv1d(inner + 2 * state, inner + 2 * state, kernel, groups=inner + 2 * state, padding=kernel - 1)
        self.dt_bias = torch.nn.Parameter(torch.rand(heads) - 4.0)
        self.log_decay = torch.nn.Parameter(torch.log(torch.rand(heads) * 15 + 1))
        self.skip = torch.nn.Parameter(torch.ones(heads))
        self.gate_norm = RmsNorm(inner)
        self.project_out = torch.nn.Linear(inner, d, bias=False)

    def forward(self, u):
        length, inner = u.shape[1], self.heads * self.head_dim
        z, xbc, dt = self.project_in(self.norm(u)).split([inner, inner + 2 * self.state, self.heads], -1)
        xbc = F.silu(self.conv(xbc.transpose(1, 2))[..., :length].transpose(1, 2))
        x, b, c = xbc.split([inner, self.state, self.state], -1)
        dt = F.softplus(dt + self.dt_bias)                                        # [1, L, H]
        decay = (dt * -torch.exp(self.log_decay)).transpose(1, 2).cumsum(-1)      # [1, H, L]
        mask = torch.ones(length, length, dtype=torch.bool).tril()
        segment = torch.exp((decay[..., :, None] - decay[..., None, :]).masked_fill(~mask, float("-inf")))
        scores = (c @ b.transpose(1, 2))[:, None] * segment                      # [1, H, L, L]
        x = x.reshape(1, length, self.heads, self.head_dim).transpose(1, 2)       # [1, H, L, P]
        y = scores @ (x * dt.transpose(1, 2)[..., None]) + x * self.skip[:, None, None]
        y = y.transpose(1, 2).reshape(1, length, inner)
        return u + self.project_out(self.gate_norm(y * F.silu(z)))


class Mamba2(torch.nn.Module):
    def __init__(self, vocab=2000, d=256, layers=4, heads=8, head_dim=64, state=64):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Mamba2Block(d, heads, head_dim, state) for _ in range(layers))
        self.norm = RmsNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class CondConv2d(torch.nn.Module):
    """A convolution whose kernel is sigmoid(router(mean of x)) @ experts: weights made at run time."""

    def __init__(self, cin, cout, kernel, stride=1, groups=1, experts=4):
        super().__init__()
        self.shape = (cout, cin // groups, kernel, kernel)
        self.stride, self.padding, self.groups = stride, kernel // 2, groups
        self.router = torch.nn.Linear(cin, experts)
        self.experts = torch.nn.Parameter(torch.randn(experts, math.prod(self.shape)) / math.sqrt(cin // groups * kernel * kernel))

    def forward(self, x):
        routing = torch.sigmoid(self.router(x.mean((2, 3))))                      # batch 1: [1, E]
        weight = (routing @ self.experts).reshape(self.shape)
        return F.conv2d(x, weight, None, self.stride, self.padding, 1, self.groups)


class CondConvBlock(torch.nn.Module):
    """An inverted residual whose expansion, depthwise and projection convolutions are all CondConv."""

    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        hidden = cin * expand
        self.body = torch.nn.Sequential(CondConv2d(cin, hidden, 1), torch.nn.BatchNorm2d(hidden), torch.nn.SiLU(),
                                        CondConv2d(hidden, hidden, 3, stride, groups=hidden), torch.nn.BatchNorm2d(hidden), torch.nn.SiLU(),
                                        CondConv2d(hidden, cout, 1), torch.nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class CondConvNet(torch.nn.Module):
    def __init__(self, widths=(16, 24, 40, 80, 112), classes=1000):
        super().__init__()
        layers = [torch.nn.Conv2d(3, widths[0], 3, 2, 1), torch.nn.BatchNorm2d(widths[0]), torch.nn.SiLU()]
        for cin, cout in zip(widths, widths[1:]):
            layers += [CondConvBlock(cin, cout, 2), CondConvBlock(cout, cout, 1)]
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(widths[-1], classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class WaveNetLayer(torch.nn.Module):
    def __init__(self, residual, skip, dilation):
        super().__init__()
        self.pad = dilation
        self.dilated = torch.nn.Conv1d(residual, 2 * residual, 2, dilation=dilation)
        self.residual = torch.nn.Conv1d(residual, residual, 1)
        self.skip = torch.nn.Conv1d(residual, skip, 1)

    def forward(self, x):
        filter_, gate = self.dilated(F.pad(x, (self.pad, 0))).chunk(2, 1)
        y = torch.tanh(filter_) * torch.sigmoid(gate)
        return x + self.residual(y), self.skip(y)


class WaveNet(torch.nn.Module):
    def __init__(self, residual=32, skip=64, stacks=2, layers=10, classes=256):
        super().__init__()
        self.input = torch.nn.Conv1d(1, residual, 2)
        self.layers = torch.nn.ModuleList(WaveNetLayer(residual, skip, 2 ** i) for _ in range(stacks) for i in range(layers))
        self.head = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Conv1d(skip, skip, 1), torch.nn.ReLU(), torch.nn.Conv1d(skip, classes, 1))

    def forward(self, audio):
        x = self.input(F.pad(audio, (1, 0)))
        skips = 0
        for layer in self.layers:
            x, s = layer(x)
            skips = skips + s
        return F.log_softmax(self.head(skips), 1)


def sparsemax(z):
    """Euclidean projection of each row onto the simplex: sort, cumulative sums, support, threshold."""
    n = z.shape[-1]
    ordered, _ = torch.sort(z, -1, descending=True)
    running = ordered.cumsum(-1) - 1
    k = torch.arange(1, n + 1, dtype=z.dtype)
    support = (k * ordered > running).sum(-1, keepdim=True)
    threshold = running.gather(-1, support - 1) / support.to(z.dtype)
    return torch.clamp(z - threshold, min=0)


class GluLayer(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.linear = torch.nn.Linear(cin, 2 * cout, bias=False)
        self.norm = torch.nn.BatchNorm1d(2 * cout)

    def forward(self, x):
        return F.glu(self.norm(self.linear(x)), -1)


class FeatureTransformer(torch.nn.Module):
    def __init__(self, cin, width, shared):
        super().__init__()
        self.layers = torch.nn.ModuleList([shared[0], shared[1], GluLayer(width, width), GluLayer(width, width)])

    def forward(self, x):
        x = self.layers[0](x)
        for layer in self.layers[1:]:
            x = (x + layer(x)) * math.sqrt(0.5)
        return x


class TabNet(torch.nn.Module):
    def __init__(self, features=54, decision=16, attention=16, steps=3, classes=7, relaxation=1.3):
        super().__init__()
        width = decision + attention
        self.decision, self.relaxation = decision, relaxation
        self.input_norm = torch.nn.BatchNorm1d(features)
        shared = [GluLayer(features, width), GluLayer(width, width)]
        self.initial = FeatureTransformer(features, width, shared)
        self.transformers = torch.nn.ModuleList(FeatureTransformer(features, width, shared) for _ in range(steps))
        self.attentive = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(attention, features, bias=False), torch.nn.BatchNorm1d(features))
                                             for _ in range(steps))
        self.head = torch.nn.Linear(decision, classes)

    def forward(self, x):
        x = self.input_norm(x)
        prior = torch.ones_like(x)
        attended = self.initial(x)[:, self.decision:]
        out = 0
        for transformer, attentive in zip(self.transformers, self.attentive):
            mask = sparsemax(attentive(attended) * prior)
            prior = prior * (self.relaxation - mask)
            y = transformer(mask * x)
            out = out + F.relu(y[:, :self.decision])
            attended = y[:, self.decision:]
        return self.head(out)


class SineLayer(torch.nn.Module):
    def __init__(self, cin, cout, first, omega=30.0):
        super().__init__()
        self.omega = omega
        self.linear = torch.nn.Linear(cin, cout)
        bound = 1 / cin if first else math.sqrt(6 / cin) / omega
        torch.nn.init.uniform_(self.linear.weight, -bound, bound)

    def forward(self, x):
        return torch.sin(self.omega * self.linear(x))


class Siren(torch.nn.Module):
    def __init__(self, hidden=256, layers=4, outputs=3):
        super().__init__()
        self.net = torch.nn.Sequential(SineLayer(2, hidden, True), *(SineLayer(hidden, hidden, False) for _ in range(layers - 1)))
        self.out = torch.nn.Linear(hidden, outputs)

    def forward(self, coords):
        return self.out(self.net(coords))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


class GqaLayer(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.attention_norm, self.ffn_norm = RmsNorm(d), RmsNorm(d)
        self.q = torch.nn.Linear(d, d, bias=False)
        self.kv = torch.nn.Linear(d, 2 * kv_heads * self.head_dim, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.gate_up = torch.nn.Linear(d, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin, past_k, past_v):
        h = self.attention_norm(x)
        q = self.q(h).reshape(1, 1, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).reshape(1, 1, 2 * self.kv_heads, self.head_dim).transpose(1, 2).chunk(2, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        keys, values = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)          # [1, KV, T, D]
        group, steps = self.heads // self.kv_heads, keys.shape[2]
        expanded_k = keys[:, :, None].expand(1, self.kv_heads, group, steps, self.head_dim).reshape(1, self.heads, steps, self.head_dim)
        expanded_v = values[:, :, None].expand(1, self.kv_heads, group, steps, self.head_dim).reshape(1, self.heads, steps, self.head_dim)
        weights = torch.softmax(q @ expanded_k.transpose(2, 3) / math.sqrt(self.head_dim), -1)
        x = x + self.o((weights @ expanded_v).transpose(1, 2).reshape(1, 1, -1))
        gate, up = self.gate_up(self.ffn_norm(x)).chunk(2, -1)
        return x + self.down(F.silu(gate) * up), keys, values


class GqaDecoder(torch.nn.Module):
    def __init__(self, vocab=4000, d=512, layers=4, heads=8, kv_heads=2, ffn=1408):
        super().__init__()
        self.head_dim = d // heads
        self.embed = torch.nn.Embedding(vocab, d)
        self.layers = torch.nn.ModuleList(GqaLayer(d, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = RmsNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids, past_keys, past_values):
        position = past_keys.shape[3]
        inverse = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        angles = torch.cat([inverse, inverse]) * position
        cos, sin = angles.cos(), angles.sin()
        x, keys, values = self.embed(ids), [], []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, past_keys[i], past_values[i])
            keys.append(k)
            values.append(v)
        return self.head(self.norm(x)), torch.stack(keys), torch.stack(values)


class TacotronStep(torch.nn.Module):
    def __init__(self, mels=80, prenet=256, encoder=512, attention_rnn=1024, decoder_rnn=1024, attention=128, filters=32, kernel=31):
        super().__init__()
        self.prenet = torch.nn.Sequential(torch.nn.Linear(mels, prenet, bias=False), torch.nn.ReLU(), torch.nn.Linear(prenet, prenet, bias=False), torch.nn.ReLU())
        self.attention_rnn = torch.nn.LSTMCell(prenet + encoder, attention_rnn)
        self.query = torch.nn.Linear(attention_rnn, attention, bias=False)
        self.location_conv = torch.nn.Conv1d(2, filters, kernel, padding=kernel // 2, bias=False)
        self.location_dense = torch.nn.Linear(filters, attention, bias=False)
        self.energy = torch.nn.Linear(attention, 1, bias=False)
        self.decoder_rnn = torch.nn.LSTMCell(attention_rnn + encoder, decoder_rnn)
        self.mel = torch.nn.Linear(decoder_rnn + encoder, mels)
        self.gate = torch.nn.Linear(decoder_rnn + encoder, 1)

    def forward(self, frame, memory, processed_memory, attention_h, attention_c, decoder_h, decoder_c, weights, cumulative, context, mask):
        attention_h, attention_c = self.attention_rnn(torch.cat([self.prenet(frame), context], -1), (attention_h, attention_c))
        location = self.location_dense(self.location_conv(torch.stack([weights, cumulative], 1)).transpose(1, 2))
        energies = self.energy(torch.tanh(self.query(attention_h)[:, None] + location + processed_memory)).squeeze(-1)
        weights = torch.softmax(energies.masked_fill(mask, -1e4), -1)
        context = (weights[:, None] @ memory).squeeze(1)
        decoder_h, decoder_c = self.decoder_rnn(torch.cat([attention_h, context], -1), (decoder_h, decoder_c))
        out = torch.cat([decoder_h, context], -1)
        return self.mel(out), self.gate(out), attention_h, attention_c, decoder_h, decoder_c, weights, cumulative + weights, context


class ProbSparseAttention(torch.nn.Module):
    """Informer's attention: only the top u queries by max - mean of sampled scores attend; the rest
    take the mean of V. The key sample is drawn once (at export), as a traced model keeps it."""

    def __init__(self, d, heads, length, factor=5):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.top = min(length, factor * math.ceil(math.log(length)))
        self.register_buffer("sample", torch.randint(length, (length, self.top), generator=torch.Generator().manual_seed(3)))

    def forward(self, x):
        length = x.shape[1]
        q, k, v = self.qkv(x).reshape(1, length, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)   # [1, H, L, D]
        sampled = k[:, :, self.sample]                                                              # [1, H, L, S, D]
        sampled_scores = (q[:, :, :, None] @ sampled.transpose(-2, -1)).squeeze(-2)                  # [1, H, L, S]
        measure = sampled_scores.max(-1)[0] - sampled_scores.sum(-1) / length
        top = measure.topk(self.top, -1, sorted=False)[1]                                           # [1, H, u]
        q_top = q.gather(2, top[..., None].expand(-1, -1, -1, self.head_dim))
        attended = torch.softmax(q_top @ k.transpose(-2, -1) / math.sqrt(self.head_dim), -1) @ v
        context = v.mean(2, keepdim=True).expand(-1, -1, length, -1).clone()
        context[torch.arange(1)[:, None, None], torch.arange(self.heads)[None, :, None], top] = attended
        return self.out(context.transpose(1, 2).reshape(1, length, -1))


class InformerLayer(torch.nn.Module):
    def __init__(self, d, heads, length):
        super().__init__()
        self.attention = ProbSparseAttention(d, heads, length)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.ffn = torch.nn.Sequential(torch.nn.Conv1d(d, 4 * d, 1), torch.nn.GELU(), torch.nn.Conv1d(4 * d, d, 1))

    def forward(self, x):
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.ffn(x.transpose(1, 2)).transpose(1, 2))


class CircularConv1d(torch.nn.Conv1d):
    """A kernel-3 Conv1d with circular padding written as a Concat: torch 1.13 exports
    padding_mode="circular" of a Conv1d wrongly (ONNX Runtime and tilebank agree with each other, not with torch)."""

    def __init__(self, cin, cout):
        super().__init__(cin, cout, 3)

    def forward(self, x):
        return super().forward(torch.cat([x[..., -1:], x, x[..., :1]], -1))


class Distil(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv = CircularConv1d(d, d)
        self.norm = torch.nn.BatchNorm1d(d)
        self.pool = torch.nn.MaxPool1d(3, 2, 1)

    def forward(self, x):
        return self.pool(F.elu(self.norm(self.conv(x.transpose(1, 2))))).transpose(1, 2)


class Informer(torch.nn.Module):
    def __init__(self, variables=7, length=96, horizon=24, d=256, heads=8, layers=3):
        super().__init__()
        self.horizon, self.variables = horizon, variables
        self.embed = CircularConv1d(variables, d)
        self.register_buffer("positions", torch.randn(1, length, d) * 0.1)
        self.layers = torch.nn.ModuleList(InformerLayer(d, heads, length // 2 ** i) for i in range(layers))
        self.distil = torch.nn.ModuleList(Distil(d) for _ in range(layers - 1))
        self.head = torch.nn.Linear(d * (length // 2 ** (layers - 1)), horizon * variables)

    def forward(self, series):
        x = self.embed(series.transpose(1, 2)).transpose(1, 2) + self.positions
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.distil):
                x = self.distil[i](x)
        return self.head(x.flatten(1)).reshape(1, self.horizon, self.variables)


def mamba2(small):
    model = Mamba2(vocab=50, d=16, layers=1, heads=2, head_dim=8, state=8) if small else Mamba2()
    return model.eval(), (random_ids(50 if small else 2000, (1, 16 if small else 256), 1),), ["input_ids"], None


def condconv(small, batch_norm_statistics):
    model = CondConvNet(widths=(8, 16, 24), classes=10) if small else CondConvNet()
    return batch_norm_statistics(model).eval(), (seeded(1, 3, 32, 32) if small else seeded(1, 3, 128, 128),), ["input"], None


def wavenet(small):
    model = WaveNet(residual=8, skip=8, stacks=1, layers=4, classes=16) if small else WaveNet()
    return model.eval(), (seeded(1, 1, 256) if small else seeded(1, 1, 4000),), ["audio"], None


def tabnet(small, batch_norm_statistics):
    model = TabNet(features=10, decision=8, attention=8, steps=2, classes=3) if small else TabNet()
    return batch_norm_statistics(model).eval(), (seeded(16, 10) if small else seeded(1024, 54),), ["features"], None


def siren(small):
    model = Siren(hidden=16, layers=2) if small else Siren()
    side = 16 if small else 256
    grid = torch.stack(torch.meshgrid(torch.linspace(-1, 1, side), torch.linspace(-1, 1, side), indexing="ij"), -1).reshape(-1, 2)
    return model.eval(), (grid,), ["coords"], None


def gqa_decoder(small):
    model = GqaDecoder(vocab=50, d=32, layers=1, heads=4, kv_heads=2, ffn=48) if small else GqaDecoder()
    layers, kv_heads, head_dim, past = (1, 2, 8, 7) if small else (4, 2, 64, 255)
    cache = seeded(2, layers, 1, kv_heads, past, head_dim)
    return model.eval(), (random_ids(50 if small else 4000, (1, 1), 1), cache[0], cache[1]), ["input_ids", "past_keys", "past_values"], None


def tacotron_step(small):
    widths = dict(mels=8, prenet=16, encoder=16, attention_rnn=24, decoder_rnn=24, attention=8, filters=4, kernel=5) if small else {}
    model = TacotronStep(**widths)
    mels, encoder, attention_rnn = widths.get("mels", 80), widths.get("encoder", 512), widths.get("attention_rnn", 1024)
    decoder_rnn, attention, steps = widths.get("decoder_rnn", 1024), widths.get("attention", 128), 12 if small else 200
    weights = torch.softmax(seeded(1, steps), -1)
    mask = torch.zeros(1, steps, dtype=torch.bool)
    mask[:, steps - steps // 8:] = True
    inputs = (seeded(1, mels), seeded(1, steps, encoder), seeded(1, steps, attention), seeded(1, attention_rnn) * 0.1, seeded(1, attention_rnn) * 0.1,
              seeded(1, decoder_rnn) * 0.1, seeded(1, decoder_rnn) * 0.1, weights, weights * 3, seeded(1, encoder) * 0.1, mask)
    names = ["frame", "memory", "processed_memory", "attention_h", "attention_c", "decoder_h", "decoder_c", "weights", "cumulative", "context", "mask"]
    return model.eval(), inputs, names, None


def informer(small, batch_norm_statistics):
    model = Informer(variables=3, length=32, horizon=4, d=16, heads=2, layers=2) if small else Informer()
    return batch_norm_statistics(model).eval(), (seeded(1, 32, 3) if small else seeded(1, 96, 7),), ["series"], None
