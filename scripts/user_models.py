"""The model families users bring beyond classifiers and float-input transformers, built from torch.nn
and torchvision (scripts/export_models.py exports them, scripts/model_zoo.py runs them):

  text_encoder        BERT-style encoder over token ids: embeddings (word, position), 4 layers of
                      torch.nn.TransformerEncoder (d_model 256, 4 heads), an attention mask of 0/1 ints
                      turned into a key padding mask; inputs input_ids, attention_mask [1,64] int64
  text_decoder        GPT-2-style decoder over token ids: token and position embeddings, 4 pre-LayerNorm
                      blocks with a causal mask made inside the model, a tied LM head; input_ids [1,64]
  lstm_classifier     embedding, a 2-layer bidirectional LSTM, a linear head on the last step; [1,50] ids
  gru_forecaster      a 2-layer GRU over [1,96,8] float features, a linear head on every step
  audio_encoder       Conv1d front-end (two stride-2 convolutions, GELU) over [1,80,400] log-mel frames,
                      then 2 TransformerEncoder layers (d_model 192)
  video_r3d           torchvision's r3d_18 (3-D convolutions), clip [1,3,8,56,56]
  unet                a 3-level UNet with GroupNorm, SiLU and ConvTranspose upsampling, [1,3,64,64]
  optical_flow        torchvision's raft_small (correlation pyramid, GridSample lookups, a ConvGRU
                      update unrolled 4 times) on two [1,3,128,128] frames, the last flow field
  refiner             a torch.jit.script module with control flow kept in the graph: a Loop whose trip
                      count is an input, an If on the values inside it (ONNX Loop and If with
                      subgraphs reading the outer weights); inputs [1,256] features and steps ()
  detector            torchvision's ssdlite320_mobilenet_v3_large in eval mode (boxes from the image's
                      values, TopK, NonMaxSuppression), [1,3,320,320], its first output (boxes)
  yolo_detector       a YOLOv8n-style detector: Conv+BatchNorm+SiLU blocks, C2f bottlenecks (Split,
                      Concat, residual Adds), SPPF max pooling, nearest upsampling, a feature pyramid
                      and decoupled box/class heads (class scores through Sigmoid), [1,3,320,320] ->
                      [1,144,2100] (64 box-distribution and 80 class channels per anchor)
  llama_decoder       a LLaMA-style decoder over token ids: RMSNorm, rotary position embeddings,
                      causal attention without biases, SwiGLU feed-forward (6 layers, hidden 512,
                      8 heads, FFN 1376), an untied LM head; input_ids [1,128]
  moe_block           a mixture-of-experts transformer block: self-attention, a router taking the
                      top 2 of 8 GELU feed-forward experts per token, each expert run on its tokens
                      (NonZero, Gather) and added back at their rows (ScatterND, add); [1,128,256]
  qat_resnet18        ResNet-18 after quantization-aware training as torch.onnx exports it: fake
                      quantization (QuantizeLinear -> DequantizeLinear) of every activation and of
                      each weight per channel, a BatchNormalization after each Conv; [1,3,224,224]
  qop_resnet18        ResNet-18 as ONNX Runtime's static quantizer writes it in its QOperator format
                      (scripts/qoperator.py, calibrated on the test input): QLinearConv, MaxPool on
                      uint8, com.microsoft QLinearAdd, QLinearGlobalAveragePool and QGemm; the
                      expected output is the float model's; [1,3,224,224]
  tcn                 a temporal convolution network: 6 residual blocks of two dilated causal Conv1d
                      (dilation 1..32, kernel 3, left padding), ReLU, a 1x1 Conv1d on the residual
                      where channels change; [1,16,1000] features -> [1,64,1000]
  kv_decoder          one decode step of a GPT-style decoder with a KV cache: the new token's
                      embedding, 4 pre-LayerNorm blocks each reading its layer's past keys and values
                      [1,4,127,64] and returning them with the new token's appended (Concat), GELU MLP,
                      an LM head; inputs input_ids [1,1], past_keys and past_values [4,1,4,127,64]
  gcn                 a 3-layer graph convolution network on a dense normalized adjacency: A X W with
                      ReLU, node features [512,64], adjacency [512,512] (both inputs) -> [512,16]
  gat                 a 2-layer graph attention network (4 heads): LeakyRelu edge scores masked by the
                      adjacency (Where), Softmax, aggregation as an Einsum (hij,jhf->ihf), ELU;
                      node features [500,64], adjacency [500,500] -> [500,8] log-probabilities
  crnn                text-line recognition: three Conv+ReLU+MaxPool stages, the feature columns into
                      a 2-layer bidirectional LSTM (input 1024, hidden 256), a per-step classifier
                      with LogSoftmax; [1,1,32,128] -> [32,1,37]
  espcn               super-resolution: Conv(5x5)+Tanh, Conv(3x3)+Tanh, Conv to 9 channels, PixelShuffle
                      (DepthToSpace, x3), Sigmoid; [1,1,224,224] -> [1,1,672,672]
  dcgan               a DCGAN generator: five ConvTranspose layers (4x4, stride 2) with BatchNorm and
                      ReLU, Tanh; latent [1,100,1,1] -> [1,3,64,64]
  pointnet            PointNet classification: shared MLPs as 1x1 Conv1d with BatchNorm and ReLU
                      (3 -> 64 -> 128 -> 1024 per point), max over the points, an MLP head;
                      [1,3,2048] points -> [1,40]
  convnext, conformer, vae_decoder, deeplab: scripts/user_models_modern.py
  style_transfer, conv_tasnet, dgcnn, regnet_x, bicubic_sr, gated_scan, ...: scripts/user_models_held_out.py
  temporal_shift, dlrm, segment_onehot, retrieval, relative_bias, demucs_lite:
                      scripts/user_models_index_heavy.py
  segnet, pspnet, mlp_mixer, linear_attention, nerf, lrn_alexnet, hrnet_lite:
                      scripts/user_models_pooling_mixing.py
  involution, clip_head, seq2seq, ctc_bigru, point_sort, ft_transformer: scripts/user_models_unfold_sort.py
  gnn_scatter, perceiver, textcnn, bifpn_lite, kan, sparse_topk: scripts/user_models_scatter_masks.py
  vqvae, ghostnet, hourglass, quartznet, alibi_encoder, retnet, attention_unet, srresnet, convseq, siamese:
                      scripts/user_models_codebooks_gates.py
  cbam_resnet, sknet, eca_net, nonlocal_net, bisenet, res2net: scripts/user_models_attention_maps.py
  convmixer, dit, glow, keyword_spotter, patchtst, poolformer, dcn_v2, detr:
                      scripts/user_models_flows_spectra.py
  mamba2, condconv, wavenet, tabnet, siren, gqa_decoder, tacotron_step, informer:
                      scripts/user_models_scans_dynamic.py
  stn, sinkhorn, convnext_v2, nafnet, fastspeech, pointnet2, slowfast, u2net:
                      scripts/user_models_grids_regulators.py
  rwkv, bilstm_crf, set_transformer, arcface, deepfm, midas_lite, realnvp, sam_decoder:
                      scripts/user_models_recurrences_sets.py
  hifigan, ecapa_tdnn, roi_head, centernet, tft, nbeats, performer, selu_tabular:
                      scripts/user_models_vocoders_heads.py
  bag_of_unique, lppool_net, restormer_lite, causal_linear_lm, gumbel_vq: scripts/user_models_tokens_restoration.py
  faster_rcnn, r2plus1d, unet3d, char_rnn, yolov5_focus: scripts/user_models_volumes_proposals.py

Each builder returns (model in eval mode, inputs, input names, dynamic axes or None); small_* variants
are the test suite's.
"""
import math

import torch
import torchvision

from user_models_modern import Conformer, ConvBnSilu, ConvNeXt, DeepLab, VaeDecoder
import user_models_attention_maps as attention_maps
import user_models_codebooks_gates as codebooks_gates
import user_models_flows_spectra as flows_spectra
import user_models_grids_regulators as grids_regulators
import user_models_held_out as held_out
import user_models_index_heavy as index_heavy
import user_models_pooling_mixing as pooling_mixing
import user_models_recurrences_sets as recurrences_sets
import user_models_scans_dynamic as scans_dynamic
import user_models_scatter_masks as scatter_masks
import user_models_unfold_sort as unfold_sort
import user_models_tokens_restoration as tokens_restoration
import user_models_vocoders_heads as vocoders_heads
import user_models_volumes_proposals as volumes_proposals

VOCAB = 1000


class TextEncoder(torch.nn.Module):
    def __init__(self, layers=4, d_model=256, heads=4, ffn=1024, vocab=VOCAB, positions=512):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d_model)
        self.positions = torch.nn.Embedding(positions, d_model)
        self.norm = torch.nn.LayerNorm(d_model)
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, batch_first=True, activation="gelu")
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, input_ids, attention_mask):
        steps = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.norm(self.words(input_ids) + self.positions(steps))
        return self.encoder(x, src_key_padding_mask=attention_mask == 0)


class TextDecoder(torch.nn.Module):
    def __init__(self, layers=4, d_model=256, heads=4, vocab=VOCAB, positions=512):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d_model)
        self.positions = torch.nn.Embedding(positions, d_model)
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, activation="gelu", norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(d_model)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        steps = torch.arange(n, device=input_ids.device).unsqueeze(0)
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        x = self.blocks(self.words(input_ids) + self.positions(steps), mask=causal)
        return self.norm(x) @ self.words.weight.t()


class LstmClassifier(torch.nn.Module):
    def __init__(self, vocab=VOCAB, embed=64, hidden=128, classes=5):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, embed)
        self.lstm = torch.nn.LSTM(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden, classes)

    def forward(self, input_ids):
        y, _ = self.lstm(self.embed(input_ids))
        return self.head(y[:, -1])


class GruForecaster(torch.nn.Module):
    def __init__(self, features=8, hidden=64):
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.head(y)


class AudioEncoder(torch.nn.Module):
    def __init__(self, mels=80, d_model=192, heads=4, layers=2):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(mels, d_model, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv1d(d_model, d_model, 3, stride=2, padding=1)
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, activation="gelu", norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, mel):
        x = torch.nn.functional.gelu(self.conv2(torch.nn.functional.gelu(self.conv1(mel))))
        return self.encoder(x.transpose(1, 2))


class UNet(torch.nn.Module):
    def __init__(self, channels=(32, 64, 128), groups=8):
        super().__init__()

        def block(cin, cout):
            return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.GroupNorm(groups, cout), torch.nn.SiLU(),
                                       torch.nn.Conv2d(cout, cout, 3, padding=1), torch.nn.GroupNorm(groups, cout), torch.nn.SiLU())

        c1, c2, c3 = channels
        self.down1, self.down2, self.middle = block(3, c1), block(c1, c2), block(c2, c3)
        self.pool = torch.nn.MaxPool2d(2)
        self.up2, self.dec2 = torch.nn.ConvTranspose2d(c3, c2, 2, stride=2), block(2 * c2, c2)
        self.up1, self.dec1 = torch.nn.ConvTranspose2d(c2, c1, 2, stride=2), block(2 * c1, c1)
        self.out = torch.nn.Conv2d(c1, 3, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        m = self.middle(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up2(m), d2], 1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], 1))
        return self.out(u1)


class DetectorBoxes(torch.nn.Module):
    """A torchvision detector's boxes for one image (its list-of-dicts output is not an ONNX output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]["boxes"]


class YoloBottleneck(torch.nn.Module):
    def __init__(self, channels, shortcut):
        super().__init__()
        self.cv1, self.cv2, self.shortcut = ConvBnSilu(channels, channels, 3), ConvBnSilu(channels, channels, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.shortcut else y


class C2f(torch.nn.Module):
    """YOLOv8's CSP block: split the 1x1 projection in two, run bottlenecks on the second half, concatenate every stage."""

    def __init__(self, cin, cout, blocks, shortcut):
        super().__init__()
        self.hidden = cout // 2
        self.cv1 = ConvBnSilu(cin, 2 * self.hidden)
        self.cv2 = ConvBnSilu((2 + blocks) * self.hidden, cout)
        self.blocks = torch.nn.ModuleList(YoloBottleneck(self.hidden, shortcut) for _ in range(blocks))

    def forward(self, x):
        ys = list(self.cv1(x).split((self.hidden, self.hidden), 1))
        for block in self.blocks:
            ys.append(block(ys[-1]))
        return self.cv2(torch.cat(ys, 1))


class Sppf(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.cv1, self.cv2 = ConvBnSilu(cin, cin // 2), ConvBnSilu(2 * cin, cout)
        self.pool = torch.nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        y1 = self.cv1(x)
        y2 = self.pool(y1)
        y3 = self.pool(y2)
        return self.cv2(torch.cat([y1, y2, y3, self.pool(y3)], 1))


class YoloDetector(torch.nn.Module):
    def __init__(self, width=(16, 32, 64, 128, 256), depth=(1, 2, 2, 1), classes=80, box_bins=16):
        super().__init__()
        w0, w1, w2, w3, w4 = width
        self.stem = torch.nn.Sequential(ConvBnSilu(3, w0, 3, 2), ConvBnSilu(w0, w1, 3, 2), C2f(w1, w1, depth[0], True))
        self.p3 = torch.nn.Sequential(ConvBnSilu(w1, w2, 3, 2), C2f(w2, w2, depth[1], True))
        self.p4 = torch.nn.Sequential(ConvBnSilu(w2, w3, 3, 2), C2f(w3, w3, depth[2], True))
        self.p5 = torch.nn.Sequential(ConvBnSilu(w3, w4, 3, 2), C2f(w4, w4, depth[3], True), Sppf(w4, w4))
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.top4, self.top3 = C2f(w4 + w3, w3, 1, False), C2f(w3 + w2, w2, 1, False)
        self.down3, self.bottom4 = ConvBnSilu(w2, w2, 3, 2), C2f(w2 + w3, w3, 1, False)
        self.down4, self.bottom5 = ConvBnSilu(w3, w3, 3, 2), C2f(w3 + w4, w4, 1, False)
        box, cls = max(16, w2 // 4, 4 * box_bins), max(w2, classes)
        self.box = torch.nn.ModuleList(torch.nn.Sequential(ConvBnSilu(c, box, 3), ConvBnSilu(box, box, 3), torch.nn.Conv2d(box, 4 * box_bins, 1))
                                       for c in (w2, w3, w4))
        self.cls = torch.nn.ModuleList(torch.nn.Sequential(ConvBnSilu(c, cls, 3), ConvBnSilu(cls, cls, 3), torch.nn.Conv2d(cls, classes, 1))
                                       for c in (w2, w3, w4))

    def forward(self, x):
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        t4 = self.top4(torch.cat([self.up(p5), p4], 1))
        n3 = self.top3(torch.cat([self.up(t4), p3], 1))
        n4 = self.bottom4(torch.cat([self.down3(n3), t4], 1))
        n5 = self.bottom5(torch.cat([self.down4(n4), p5], 1))
        levels = []
        for feature, box, cls in zip((n3, n4, n5), self.box, self.cls):
            y = torch.cat([box(feature), torch.sigmoid(cls(feature))], 1)
            levels.append(y.flatten(2))
        return torch.cat(levels, 2)


class RmsNorm(torch.nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight, self.eps = torch.nn.Parameter(1 + 0.1 * torch.randn(width)), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


class LlamaBlock(torch.nn.Module):
    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.attn_norm, self.ffn_norm = RmsNorm(d_model), RmsNorm(d_model)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d_model, d_model, bias=False) for _ in range(4))
        self.gate, self.up = torch.nn.Linear(d_model, ffn, bias=False), torch.nn.Linear(d_model, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d_model, bias=False)

    def forward(self, x, cos, sin, causal):
        n = x.shape[1]
        h = self.attn_norm(x)
        q, k, v = (p(h).view(1, n, self.heads, self.head_dim).transpose(1, 2) for p in (self.q, self.k, self.v))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim) + causal
        attended = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(1, n, -1)
        x = x + self.o(attended)
        h = self.ffn_norm(x)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


class LlamaDecoder(torch.nn.Module):
    def __init__(self, layers=6, d_model=512, heads=8, ffn=1376, vocab=2000, positions=512):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d_model)
        self.blocks = torch.nn.ModuleList(LlamaBlock(d_model, heads, ffn) for _ in range(layers))
        self.norm = RmsNorm(d_model)
        self.head = torch.nn.Linear(d_model, vocab, bias=False)
        head_dim = d_model // heads
        inverse = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(positions).float(), inverse)
        angles = torch.cat([angles, angles], -1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        cos, sin = self.cos[:n], self.sin[:n]
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        x = self.words(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin, causal)
        return self.head(self.norm(x))


class MoeBlock(torch.nn.Module):
    """A mixture-of-experts transformer block: self-attention, then a router choosing the top 2 of 8
    feed-forward experts per token (softmax weights renormalized over the two), each expert run on
    the tokens routed to it (torch.where: NonZero, Gather) and its output added back at their rows
    (index_add: ScatterND with an add reduction)."""

    def __init__(self, d_model=256, heads=4, experts=8, ffn=512, top=2):
        super().__init__()
        self.top = top
        self.norm1, self.norm2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.attention = torch.nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.router = torch.nn.Linear(d_model, experts, bias=False)
        self.experts = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(d_model, ffn), torch.nn.GELU(), torch.nn.Linear(ffn, d_model)) for _ in range(experts))

    def forward(self, x):
        a = self.norm1(x)
        h = x + self.attention(a, a, a, need_weights=False)[0]
        tokens = self.norm2(h).reshape(-1, h.shape[-1])
        weights, chosen = torch.topk(self.router(tokens).softmax(-1), self.top, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            out = out.index_add(0, token, expert(tokens[token]) * weights[token, slot].unsqueeze(-1))
        return h + out.reshape(h.shape)


class TemporalBlock(torch.nn.Module):
    """Two dilated causal Conv1d (left-padded by (kernel - 1) * dilation) with ReLU, and a residual
    (a 1x1 Conv1d where the channels change)."""

    def __init__(self, inputs, outputs, dilation, kernel=3):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv1 = torch.nn.Conv1d(inputs, outputs, kernel, dilation=dilation)
        self.conv2 = torch.nn.Conv1d(outputs, outputs, kernel, dilation=dilation)
        self.down = torch.nn.Conv1d(inputs, outputs, 1) if inputs != outputs else None

    def forward(self, x):
        h = torch.relu(self.conv1(torch.nn.functional.pad(x, (self.pad, 0))))
        h = torch.relu(self.conv2(torch.nn.functional.pad(h, (self.pad, 0))))
        return torch.relu(h + (self.down(x) if self.down is not None else x))


class Tcn(torch.nn.Module):
    def __init__(self, inputs=16, channels=64, levels=6):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[TemporalBlock(inputs if i == 0 else channels, channels, 2 ** i) for i in range(levels)])

    def forward(self, x):
        return self.blocks(x)


class KvDecoder(torch.nn.Module):
    """One decode step with a KV cache: per layer, the new token's query attends over the past keys
    and values with its own appended; returns the logits and the grown caches."""

    def __init__(self, layers=4, d_model=256, heads=4, vocab=VOCAB, positions=512):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.words, self.positions = torch.nn.Embedding(vocab, d_model), torch.nn.Embedding(positions, d_model)
        self.norm1 = torch.nn.ModuleList(torch.nn.LayerNorm(d_model) for _ in range(layers))
        self.norm2 = torch.nn.ModuleList(torch.nn.LayerNorm(d_model) for _ in range(layers))
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(d_model, 3 * d_model) for _ in range(layers))
        self.out = torch.nn.ModuleList(torch.nn.Linear(d_model, d_model) for _ in range(layers))
        self.mlp = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(d_model, 4 * d_model), torch.nn.GELU(), torch.nn.Linear(4 * d_model, d_model)) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(d_model)
        self.head = torch.nn.Linear(d_model, vocab, bias=False)

    def forward(self, input_ids, past_keys, past_values):
        past = past_keys.shape[3]
        x = self.words(input_ids) + self.positions.weight[past:past + 1]
        keys, values = [], []
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.norm1[i](x)).split(x.shape[-1], dim=-1)
            split = lambda t: t.reshape(1, 1, self.heads, self.head_dim).transpose(1, 2)
            k = torch.cat([past_keys[i], split(k)], dim=2)
            v = torch.cat([past_values[i], split(v)], dim=2)
            keys.append(k)
            values.append(v)
            attention = torch.softmax(split(q) @ k.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1) @ v
            x = x + self.out[i](attention.transpose(1, 2).reshape(1, 1, -1))
            x = x + self.mlp[i](self.norm2[i](x))
        return self.head(self.norm(x)), torch.stack(keys), torch.stack(values)


class Gcn(torch.nn.Module):
    """Graph convolutions on a dense normalized adjacency: relu(A X W) per layer, the last without."""

    def __init__(self, features=64, hidden=128, classes=16, layers=3):
        super().__init__()
        sizes = [features] + [hidden] * (layers - 1) + [classes]
        self.weights = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x, adjacency):
        for i, w in enumerate(self.weights):
            x = adjacency @ w(x)
            if i + 1 < len(self.weights):
                x = torch.relu(x)
        return x


class Gat(torch.nn.Module):
    """Graph attention: per layer and head, scores LeakyRelu(a_src . h_i + a_dst . h_j) where the
    adjacency has an edge (else -1e9), Softmax over neighbours, their features summed by weight."""

    def __init__(self, features=64, hidden=32, heads=4, classes=8):
        super().__init__()
        self.heads = heads
        self.weights = torch.nn.ModuleList([torch.nn.Linear(features, hidden * heads, bias=False), torch.nn.Linear(hidden * heads, classes * heads, bias=False)])
        self.source = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(heads, hidden)), torch.nn.Parameter(torch.randn(heads, classes))])
        self.target = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(heads, hidden)), torch.nn.Parameter(torch.randn(heads, classes))])

    def forward(self, x, adjacency):
        n = x.shape[0]
        for i, w in enumerate(self.weights):
            h = w(x).reshape(n, self.heads, -1)
            scores = (h * self.source[i]).sum(-1).t()[:, :, None] + (h * self.target[i]).sum(-1).t()[:, None, :]
            scores = torch.nn.functional.leaky_relu(scores, 0.2)
            scores = torch.where(adjacency[None] > 0, scores, torch.full_like(scores, -1e9))
            x = torch.einsum("hij,jhf->ihf", torch.softmax(scores, -1), h)
            x = torch.nn.functional.elu(x.reshape(n, -1)) if i == 0 else x.mean(1)
        return torch.log_softmax(x, -1)


class Crnn(torch.nn.Module):
    """Convolutions over a text line, its columns read by a bidirectional LSTM, a class per column."""

    def __init__(self, channels=(64, 128, 256), hidden=256, classes=37, height=32):
        super().__init__()
        c1, c2, c3 = channels
        nn = torch.nn
        self.cnn = nn.Sequential(nn.Conv2d(1, c1, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(c1, c2, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(c2, c3, 3, 1, 1), nn.BatchNorm2d(c3), nn.ReLU(), nn.MaxPool2d((2, 1)))
        self.rnn = nn.LSTM(c3 * (height // 8), hidden, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        f = self.cnn(x)
        b, c, h, w = f.shape
        y, _ = self.rnn(f.reshape(b, c * h, w).permute(2, 0, 1))
        return torch.log_softmax(self.fc(y), -1)


class Espcn(torch.nn.Module):
    """Efficient sub-pixel convolution: features at low resolution, then PixelShuffle by `scale`."""

    def __init__(self, scale=3, features=(64, 32)):
        super().__init__()
        self.a = torch.nn.Conv2d(1, features[0], 5, padding=2)
        self.b = torch.nn.Conv2d(features[0], features[1], 3, padding=1)
        self.c = torch.nn.Conv2d(features[1], scale * scale, 3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(scale)

    def forward(self, x):
        return torch.sigmoid(self.shuffle(self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))))


class DcganGenerator(torch.nn.Module):
    """DCGAN's generator: a latent vector up to an image through stride-2 ConvTranspose layers."""

    def __init__(self, latent=100, width=64):
        super().__init__()
        nn = torch.nn
        layers, channels = [], [latent, width * 8, width * 4, width * 2, width]
        for i, (a, b) in enumerate(zip(channels, channels[1:])):
            layers += [nn.ConvTranspose2d(a, b, 4, 1 if i == 0 else 2, 0 if i == 0 else 1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.ConvTranspose2d(width, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class PointNet(torch.nn.Module):
    """PointNet's classifier: a shared per-point MLP (1x1 Conv1d), max over points, an MLP head."""

    def __init__(self, widths=(64, 128, 1024), classes=40):
        super().__init__()
        nn = torch.nn
        dims = (3,) + tuple(widths)
        self.convs = nn.ModuleList(nn.Conv1d(a, b, 1) for a, b in zip(dims, dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(b) for b in dims[1:])
        self.head = nn.Sequential(nn.Linear(widths[-1], 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, classes))

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = torch.relu(norm(conv(x)))
        return self.head(torch.max(x, 2)[0])


def random_batch_norm_statistics(model):
    """BatchNorm layers with running statistics other than (0, 1), so folding them is tested."""
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=generator) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=generator) + 0.5)
    return model


def token_ids(generator, length, vocab=VOCAB):
    return torch.randint(0, vocab, (1, length), generator=generator, dtype=torch.int64)


def _text_encoder(small):
    model = TextEncoder(layers=1, d_model=32, heads=2, ffn=64) if small else TextEncoder()
    generator = torch.Generator().manual_seed(1)
    length = 16 if small else 64
    mask = torch.ones(1, length, dtype=torch.int64)
    mask[:, length * 3 // 4:] = 0
    return model.eval(), (token_ids(generator, length), mask), ["input_ids", "attention_mask"], None


def _text_decoder(small):
    model = TextDecoder(layers=1, d_model=32, heads=2) if small else TextDecoder()
    return model.eval(), (token_ids(torch.Generator().manual_seed(1), 16 if small else 64),), ["input_ids"], None


def _lstm(small):
    model = LstmClassifier(embed=16, hidden=16) if small else LstmClassifier()
    return model.eval(), (token_ids(torch.Generator().manual_seed(1), 12 if small else 50),), ["input_ids"], None


def _gru(small):
    model = GruForecaster(hidden=16) if small else GruForecaster()
    return model.eval(), (torch.randn(1, 12 if small else 96, 8, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _audio(small):
    model = AudioEncoder(mels=16, d_model=32, heads=2, layers=1) if small else AudioEncoder()
    shape = (1, 16, 40) if small else (1, 80, 400)
    return model.eval(), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _video(small):
    from torchvision.models.video.resnet import VideoResNet, BasicBlock, Conv3DSimple, BasicStem
    model = VideoResNet(BasicBlock, [Conv3DSimple] * 4, [1, 1, 1, 1], BasicStem, num_classes=10) if small else torchvision.models.video.r3d_18(weights=None)
    shape = (1, 3, 4, 32, 32) if small else (1, 3, 8, 56, 56)
    return model.eval(), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _unet(small):
    model = UNet(channels=(8, 16, 32), groups=4) if small else UNet()
    side = 32 if small else 64
    return model.eval(), (torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(1)),), ["input"], None


class LastFlow(torch.nn.Module):
    """RAFT's final flow estimate (it returns one per update)."""

    def __init__(self, model, updates):
        super().__init__()
        self.model = model
        self.updates = updates

    def forward(self, first, second):
        return self.model(first, second, num_flow_updates=self.updates)[-1]


def _optical_flow(small):
    # 128x128 in both forms: at 64 the coarsest correlation level is 1x1 and RAFT's own coordinate
    # normalization divides by zero (PyTorch's output is NaN).
    model = LastFlow(torchvision.models.optical_flow.raft_small(weights=None), 1 if small else 4)
    side = 128
    generator = torch.Generator().manual_seed(1)
    frames = tuple(torch.rand(1, 3, side, side, generator=generator) for _ in range(2))
    return model.eval(), frames, ["first", "second"], None


class Refiner(torch.nn.Module):
    """Refines features for `steps` iterations, damping the update when it grows: scripted, so the
    loop and the branch stay control flow in the exported graph."""

    def __init__(self, width=256):
        super().__init__()
        self.update = torch.nn.Linear(width, width)
        self.gate = torch.nn.Linear(width, width)

    def forward(self, x, steps):
        h = x
        for _ in range(int(steps)):
            delta = torch.tanh(self.update(h)) * torch.sigmoid(self.gate(h))
            if delta.abs().mean() > 0.25:
                delta = delta * 0.5
            h = h + delta
        return h


def _refiner(small):
    width = 16 if small else 256
    model = torch.jit.script(Refiner(width).eval())
    x = torch.randn(1, width, generator=torch.Generator().manual_seed(1))
    return model, (x, torch.tensor(3 if small else 8)), ["input", "steps"], None


def _detector(small):
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    return DetectorBoxes(model).eval(), (torch.rand(1, 3, 320, 320, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _yolo(small):
    model = YoloDetector(width=(4, 8, 16, 32, 64), depth=(1, 1, 1, 1), classes=8, box_bins=4) if small else YoloDetector()
    side = 64 if small else 320
    return model.eval(), (torch.rand(1, 3, side, side, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _llama(small):
    model = LlamaDecoder(layers=1, d_model=32, heads=2, ffn=64, vocab=100) if small else LlamaDecoder()
    return model.eval(), (token_ids(torch.Generator().manual_seed(1), 16 if small else 128, 100 if small else 2000),), ["input_ids"], None


def _moe(small):
    model = MoeBlock(d_model=32, heads=2, experts=4, ffn=64) if small else MoeBlock()
    shape = (1, 16, 32) if small else (1, 128, 256)
    return model.eval(), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _tcn(small):
    model = Tcn(inputs=4, channels=8, levels=3) if small else Tcn()
    shape = (1, 4, 50) if small else (1, 16, 1000)
    return model.eval(), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _kv_decoder(small):
    layers, d_model, heads, past = (1, 32, 2, 7) if small else (4, 256, 4, 127)
    model = KvDecoder(layers=layers, d_model=d_model, heads=heads, vocab=100 if small else VOCAB)
    generator = torch.Generator().manual_seed(1)
    cache = (layers, 1, heads, past, d_model // heads)
    inputs = (token_ids(generator, 1, 100 if small else VOCAB), torch.randn(*cache, generator=generator), torch.randn(*cache, generator=generator))
    return model.eval(), inputs, ["input_ids", "past_keys", "past_values"], None


def _gcn(small):
    nodes, features = (32, 8) if small else (512, 64)
    model = Gcn(features=features, hidden=16 if small else 128, classes=4 if small else 16)
    generator = torch.Generator().manual_seed(1)
    edges = (torch.rand(nodes, nodes, generator=generator) < 8 / nodes).float()
    adjacency = ((edges + edges.T) > 0).float() + torch.eye(nodes)
    degree = adjacency.sum(1).rsqrt()
    adjacency = degree[:, None] * adjacency * degree[None, :]
    return model.eval(), (torch.randn(nodes, features, generator=generator), adjacency), ["features", "adjacency"], None


def _gat(small):
    nodes, features = (40, 8) if small else (500, 64)
    generator = torch.Generator().manual_seed(1)
    edges = (torch.rand(nodes, nodes, generator=generator) < 0.02).float()
    adjacency = ((edges + edges.T + torch.eye(nodes)) > 0).float()
    model = Gat(features=features, hidden=8 if small else 32, heads=2 if small else 4, classes=4 if small else 8)
    return model.eval(), (torch.randn(nodes, features, generator=generator), adjacency), ["features", "adjacency"], None


def _crnn(small):
    model = Crnn(channels=(8, 16, 16), hidden=16, classes=11) if small else Crnn()
    return random_batch_norm_statistics(model).eval(), (torch.randn(1, 1, 32, 32 if small else 128, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _espcn(small):
    model = Espcn(features=(8, 8)) if small else Espcn()
    return model.eval(), (torch.randn(1, 1, 24 if small else 224, 24 if small else 224, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _dcgan(small):
    model = DcganGenerator(latent=16, width=8) if small else DcganGenerator()
    return random_batch_norm_statistics(model).eval(), (torch.randn(1, model.net[0].in_channels, 1, 1, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _pointnet(small):
    model = PointNet(widths=(8, 16, 32), classes=5) if small else PointNet()
    return random_batch_norm_statistics(model).eval(), (torch.randn(1, 3, 64 if small else 2048, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _image(small, side, small_side):
    side = small_side if small else side
    return (torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(1)),)


def _convnext(small):
    model = ConvNeXt(dims=(8, 16, 32, 64), depths=(1, 1, 1, 1), classes=10) if small else ConvNeXt()
    return model.eval(), _image(small, 224, 64), ["input"], None


def _conformer(small):
    model = Conformer(mels=20, front=8, d_model=32, heads=2, kernel=7, blocks=1, vocab=16) if small else Conformer()
    shape = (1, 1, 40, 20) if small else (1, 1, 200, 80)
    return random_batch_norm_statistics(model).eval(), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _vae_decoder(small):
    model = VaeDecoder(channels=(16, 16, 8, 8), groups=4) if small else VaeDecoder()
    side = 8 if small else 32
    return model.eval(), (torch.randn(1, 4, side, side, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _deeplab(small):
    return random_batch_norm_statistics(DeepLab(small)).eval(), _image(small, 256, 64), ["input"], None


def _qat_resnet18(small):
    """torchvision's ResNet-18 prepared for quantization-aware training in eager mode without fusing
    its modules (so a BatchNormalization follows each Conv), fake quantization calibrated on a few
    batches, then frozen: torch.onnx writes QuantizeLinear -> DequantizeLinear around every
    activation and each weight (per channel, symmetric int8)."""
    from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, QConfig
    if small:
        from torchvision.models.resnet import ResNet, BasicBlock
        model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
    else:
        model = torchvision.models.resnet18(weights=None)
    model.train()
    model.qconfig = QConfig(
        activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, reduce_range=False),
        weight=FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
                                      qscheme=torch.per_channel_symmetric))
    torch.ao.quantization.prepare_qat(model, inplace=True)
    side = 64 if small else 224
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(4, 3, side, side, generator=generator))
    model.eval()
    model.apply(torch.ao.quantization.disable_observer)
    return model, (torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _qop_resnet18(small):
    """torchvision's ResNet-18 in float, which export_models.py writes in ONNX Runtime's QOperator
    format after exporting it (POSTPROCESS)."""
    model = torchvision.models.resnet18(weights=None).eval()
    return model, (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),), ["input"], None


def _to_qoperator(path, inputs):
    import qoperator
    qoperator.quantize(path, [x.numpy() for x in inputs], path)


BUILDERS = {
    "text_encoder": ("text", _text_encoder),
    "text_decoder": ("text", _text_decoder),
    "lstm_classifier": ("recurrent", _lstm),
    "gru_forecaster": ("recurrent", _gru),
    "audio_encoder": ("audio", _audio),
    "video_r3d": ("video", _video),
    "unet": ("generative", _unet),
    "optical_flow": ("optical flow", _optical_flow),
    "refiner": ("control flow", _refiner),
    "detector": ("detection", _detector),
    "yolo_detector": ("detection", _yolo),
    "llama_decoder": ("text", _llama),
    "moe_block": ("mixture of experts", _moe),
    "qat_resnet18": ("int8 (torch.onnx QDQ)", _qat_resnet18),
    "qop_resnet18": ("int8 (ONNX Runtime QOperator)", _qop_resnet18),
    "tcn": ("temporal convolution", _tcn),
    "kv_decoder": ("text", _kv_decoder),
    "gcn": ("graph", _gcn),
    "gat": ("graph", _gat),
    "crnn": ("recurrent", _crnn),
    "espcn": ("super-resolution", _espcn),
    "dcgan": ("generative", _dcgan),
    "pointnet": ("point cloud", _pointnet),
    "convnext": ("modern CNN", _convnext),
    "conformer": ("speech", _conformer),
    "vae_decoder": ("generative", _vae_decoder),
    "deeplab": ("segmentation", _deeplab),
    "style_transfer": ("image-to-image", held_out.style_transfer),
    "conv_tasnet": ("speech separation", held_out.conv_tasnet),
    "dgcnn": ("point cloud", lambda small: held_out.dgcnn(small, random_batch_norm_statistics)),
    "regnet_x": ("grouped CNN", lambda small: held_out.regnet_x(small, random_batch_norm_statistics)),
    "bicubic_sr": ("super-resolution", held_out.bicubic_sr),
    "gated_scan": ("sequence (scan)", held_out.gated_scan),
    "capsule": ("capsule network", held_out.capsule),
    "mobilevit": ("hybrid CNN-transformer", held_out.mobilevit),
    "repvgg": ("multi-branch CNN", lambda small: held_out.repvgg(small, random_batch_norm_statistics)),
    "stylegan": ("generative (modulated convolutions)", held_out.stylegan),
    "melgan": ("vocoder", held_out.melgan),
    "convlstm": ("recurrent convolution (video)", held_out.convlstm),
    "temporal_shift": ("video (temporal shift)", index_heavy.temporal_shift),
    "dlrm": ("recommendation", index_heavy.dlrm),
    "segment_onehot": ("segmentation head", index_heavy.segment_onehot),
    "retrieval": ("retrieval (TopK)", index_heavy.retrieval),
    "relative_bias": ("text (relative position)", index_heavy.relative_bias),
    "demucs_lite": ("audio (1-D UNet)", index_heavy.demucs_lite),
    "segnet": ("segmentation (unpooling)", lambda small: pooling_mixing.segnet(small, random_batch_norm_statistics)),
    "pspnet": ("segmentation (pyramid pooling)", pooling_mixing.pspnet),
    "mlp_mixer": ("MLP-Mixer", pooling_mixing.mlp_mixer),
    "linear_attention": ("linear attention (einsum)", pooling_mixing.linear_attention),
    "nerf": ("neural field (NeRF MLP)", pooling_mixing.nerf),
    "lrn_alexnet": ("CNN with local response norm", pooling_mixing.lrn_alexnet),
    "hrnet_lite": ("pose (multi-resolution fusion)", lambda small: pooling_mixing.hrnet_lite(small, random_batch_norm_statistics)),
    "involution": ("involution (unfold)", unfold_sort.involution),
    "clip_head": ("zero-shot head (cosine)", unfold_sort.clip_head),
    "seq2seq": ("encoder-decoder transformer", unfold_sort.seq2seq),
    "ctc_bigru": ("speech (CTC, bidirectional GRU)", unfold_sort.ctc_bigru),
    "point_sort": ("point cloud (argsort, gather)", unfold_sort.point_sort),
    "ft_transformer": ("tabular transformer", unfold_sort.ft_transformer),
    "gnn_scatter": ("graph (scatter_add messages)", scatter_masks.gnn_scatter),
    "perceiver": ("Perceiver (latent cross-attention)", scatter_masks.perceiver),
    "textcnn": ("text CNN", scatter_masks.textcnn),
    "bifpn_lite": ("detection neck (BiFPN)", lambda small: scatter_masks.bifpn_lite(small, random_batch_norm_statistics)),
    "kan": ("Kolmogorov-Arnold network", scatter_masks.kan),
    "sparse_topk": ("top-k sparse attention", scatter_masks.sparse_topk),
    "vqvae": ("VQ-VAE (codebook argmin)", codebooks_gates.vqvae),
    "ghostnet": ("GhostNet", lambda small: codebooks_gates.ghostnet(small, random_batch_norm_statistics)),
    "hourglass": ("pose (stacked hourglass, soft-argmax)", lambda small: codebooks_gates.hourglass(small, random_batch_norm_statistics)),
    "quartznet": ("speech (depthwise separable Conv1d)", lambda small: codebooks_gates.quartznet(small, random_batch_norm_statistics)),
    "alibi_encoder": ("causal transformer (ALiBi, GLU)", codebooks_gates.alibi_encoder),
    "retnet": ("retention (decay mask, GroupNorm)", codebooks_gates.retnet),
    "attention_unet": ("segmentation (attention gates)", lambda small: codebooks_gates.attention_unet(small, random_batch_norm_statistics)),
    "srresnet": ("super-resolution (PReLU, PixelShuffle)", lambda small: codebooks_gates.srresnet(small, random_batch_norm_statistics)),
    "convseq": ("ConvS2S encoder (GLU)", codebooks_gates.convseq),
    "siamese": ("twin towers (cosine)", lambda small: codebooks_gates.siamese(small, random_batch_norm_statistics)),
    "cbam_resnet": ("classification (CBAM channel and spatial attention)", lambda small: attention_maps.cbam_resnet(small, random_batch_norm_statistics)),
    "sknet": ("classification (selective kernels)", lambda small: attention_maps.sknet(small, random_batch_norm_statistics)),
    "eca_net": ("classification (ECA: Conv1d across channels)", lambda small: attention_maps.eca_net(small, random_batch_norm_statistics)),
    "nonlocal_net": ("classification (non-local blocks)", lambda small: attention_maps.nonlocal_net(small, random_batch_norm_statistics)),
    "bisenet": ("segmentation (BiSeNet)", lambda small: attention_maps.bisenet(small, random_batch_norm_statistics)),
    "res2net": ("classification (Res2Net scales)", lambda small: attention_maps.res2net(small, random_batch_norm_statistics)),
    "convmixer": ("ConvMixer (depthwise 9x9, norm after GELU)", lambda small: flows_spectra.convmixer(small, random_batch_norm_statistics)),
    "dit": ("diffusion transformer (adaLN)", flows_spectra.dit),
    "glow": ("normalizing flow (Glow)", flows_spectra.glow),
    "keyword_spotter": ("audio from the waveform (STFT, mel)", lambda small: flows_spectra.keyword_spotter(small, random_batch_norm_statistics)),
    "patchtst": ("time series (patches, BatchNorm transformer)", lambda small: flows_spectra.patchtst(small, random_batch_norm_statistics)),
    "poolformer": ("PoolFormer (pooling token mixer)", flows_spectra.poolformer),
    "dcn_v2": ("recommendation (cross network)", flows_spectra.dcn_v2),
    "detr": ("detection transformer (DETR)", lambda small: flows_spectra.detr(small, random_batch_norm_statistics)),
    "mamba2": ("state-space language model (Mamba-2 scan)", scans_dynamic.mamba2),
    "condconv": ("CondConv (kernels made at run time)", lambda small: scans_dynamic.condconv(small, random_batch_norm_statistics)),
    "wavenet": ("WaveNet (gated dilated causal Conv1d)", scans_dynamic.wavenet),
    "tabnet": ("TabNet (sparsemax attention)", lambda small: scans_dynamic.tabnet(small, random_batch_norm_statistics)),
    "siren": ("SIREN (sine coordinate MLP)", scans_dynamic.siren),
    "gqa_decoder": ("decode step, grouped-query attention", scans_dynamic.gqa_decoder),
    "tacotron_step": ("Tacotron-2 decoder step (LSTM cells)", scans_dynamic.tacotron_step),
    "informer": ("Informer (ProbSparse attention)", lambda small: scans_dynamic.informer(small, random_batch_norm_statistics)),
    "stn": ("spatial transformer (GridSample)", grids_regulators.stn),
    "sinkhorn": ("matching by Sinkhorn iterations", grids_regulators.sinkhorn),
    "convnext_v2": ("ConvNeXt-V2 (global response norm)", grids_regulators.convnext_v2),
    "nafnet": ("NAFNet restoration (channel LayerNorm)", grids_regulators.nafnet),
    "fastspeech": ("FastSpeech (length regulator)", grids_regulators.fastspeech),
    "pointnet2": ("PointNet++ (sampling, ball query)", lambda small: grids_regulators.pointnet2(small, random_batch_norm_statistics)),
    "slowfast": ("SlowFast video (two pathways)", lambda small: grids_regulators.slowfast(small, random_batch_norm_statistics)),
    "u2net": ("U^2-Net salient objects (nested U)", lambda small: grids_regulators.u2net(small, random_batch_norm_statistics)),
    "rwkv": ("RWKV-4 language model (unrolled WKV)", recurrences_sets.rwkv),
    "bilstm_crf": ("BiLSTM-CRF tagger (Viterbi decode)", recurrences_sets.bilstm_crf),
    "set_transformer": ("Set Transformer (induced attention)", recurrences_sets.set_transformer),
    "arcface": ("ArcFace embedding and margin head", lambda small: recurrences_sets.arcface(small, random_batch_norm_statistics)),
    "deepfm": ("DeepFM click-through (factorization)", recurrences_sets.deepfm),
    "midas_lite": ("MiDaS-style depth (fusion blocks)", lambda small: recurrences_sets.midas_lite(small, random_batch_norm_statistics)),
    "realnvp": ("RealNVP flow (affine couplings)", lambda small: recurrences_sets.realnvp(small, random_batch_norm_statistics)),
    "sam_decoder": ("Segment-Anything mask decoder", recurrences_sets.sam_decoder),
    "hifigan": ("HiFi-GAN vocoder (ConvTranspose1d, MRF)", vocoders_heads.hifigan),
    "ecapa_tdnn": ("ECAPA-TDNN speaker embedding", lambda small: vocoders_heads.ecapa_tdnn(small, random_batch_norm_statistics)),
    "roi_head": ("two-stage detector head (RoiAlign)", lambda small: vocoders_heads.roi_head(small, random_batch_norm_statistics)),
    "centernet": ("CenterNet detector (peaks by TopK)", lambda small: vocoders_heads.centernet(small, random_batch_norm_statistics)),
    "tft": ("Temporal Fusion Transformer", vocoders_heads.tft),
    "nbeats": ("N-BEATS forecaster (basis expansion)", vocoders_heads.nbeats),
    "performer": ("Performer (FAVOR+ attention)", vocoders_heads.performer),
    "selu_tabular": ("self-normalizing tabular MLP", vocoders_heads.selu_tabular),
    "bag_of_unique": ("bag of distinct tokens (Unique)", tokens_restoration.bag_of_unique),
    "lppool_net": ("CNN with power-average pooling", lambda small: tokens_restoration.lppool_net(small, random_batch_norm_statistics)),
    "restormer_lite": ("Restormer-style restoration", tokens_restoration.restormer_lite),
    "causal_linear_lm": ("causal linear attention (CumSum)", tokens_restoration.causal_linear_lm),
    "gumbel_vq": ("VQ autoencoder (ArgMax, OneHot)", tokens_restoration.gumbel_vq),
    "faster_rcnn": ("two-stage detector (Faster R-CNN, FPN)", lambda small: volumes_proposals.faster_rcnn(small, random_batch_norm_statistics)),
    "r2plus1d": ("video (R(2+1)D factored 3-D convolutions)", lambda small: volumes_proposals.r2plus1d(small, random_batch_norm_statistics)),
    "unet3d": ("volume segmentation (3-D UNet)", volumes_proposals.unet3d),
    "char_rnn": ("character language model (Elman RNN)", volumes_proposals.char_rnn),
    "yolov5_focus": ("detection (YOLOv5 Focus, anchors decoded)", lambda small: volumes_proposals.yolov5_focus(small, random_batch_norm_statistics)),
}
SMALL = ["text_encoder", "text_decoder", "lstm_classifier", "gru_forecaster", "audio_encoder", "video_r3d", "unet", "optical_flow", "refiner", "yolo_detector", "llama_decoder",
         "moe_block", "qat_resnet18", "tcn", "kv_decoder", "gcn", "gat", "crnn", "espcn", "dcgan", "pointnet",
         "convnext", "conformer", "vae_decoder", "deeplab", "style_transfer", "conv_tasnet", "dgcnn", "regnet_x", "bicubic_sr", "gated_scan", "capsule", "mobilevit",
         "repvgg", "stylegan", "melgan", "convlstm", "temporal_shift", "dlrm", "segment_onehot", "retrieval", "relative_bias", "demucs_lite",
         "segnet", "pspnet", "mlp_mixer", "linear_attention", "nerf", "lrn_alexnet", "hrnet_lite",
         "involution", "clip_head", "seq2seq", "ctc_bigru", "point_sort", "ft_transformer",
         "gnn_scatter", "perceiver", "textcnn", "bifpn_lite", "kan", "sparse_topk",
         "vqvae", "ghostnet", "hourglass", "quartznet", "alibi_encoder", "retnet", "attention_unet", "srresnet", "convseq", "siamese",
         "cbam_resnet", "sknet", "eca_net", "nonlocal_net", "bisenet", "res2net",
         "convmixer", "dit", "glow", "keyword_spotter", "patchtst", "poolformer", "dcn_v2", "detr",
         "mamba2", "condconv", "wavenet", "tabnet", "siren", "gqa_decoder", "tacotron_step", "informer",
         "stn", "sinkhorn", "convnext_v2", "nafnet", "fastspeech", "pointnet2", "slowfast", "u2net",
         "rwkv", "bilstm_crf", "set_transformer", "arcface", "deepfm", "midas_lite", "realnvp", "sam_decoder",
         "hifigan", "ecapa_tdnn", "roi_head", "centernet", "tft", "nbeats", "performer", "selu_tabular",
         "bag_of_unique", "lppool_net", "restormer_lite", "causal_linear_lm", "gumbel_vq",
         "unet3d", "char_rnn", "yolov5_focus"]


# What export_models.py does to a family's exported ONNX file (path, the inputs) before it is kept.
POSTPROCESS = {"qop_resnet18": _to_qoperator}


def names():
    return list(BUILDERS) + ["small_" + n for n in SMALL]


def family(name):
    return BUILDERS[name.removeprefix("small_")][0]


def build(name):
    torch.manual_seed(0)
    small = name.startswith("small_")
    return BUILDERS[name.removeprefix("small_")][1](small)
