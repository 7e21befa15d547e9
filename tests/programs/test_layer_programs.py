"""Programs written the way torch scripts write them, using the layers of issue 15,
trained for some steps on every device; each asserts that its loss falls.

* a sub-pixel super-resolution net in the shape of pytorch/examples' super_resolution
  (conv stack ending in ``nn.PixelShuffle``, low-resolution inputs made with
  ``F.interpolate(mode='bicubic')``, MSE, Adam), checked against plain bicubic upsampling;
* a tiny sequence-to-sequence ``nn.Transformer`` learning to reverse token sequences
  (embeddings, sinusoidal positions, ``generate_square_subsequent_mask``, padding masks,
  teacher forcing, greedy decoding at the end);
* a 3-D convolutional classifier (Conv3d, MaxPool3d, AdaptiveAvgPool3d, a spectrally
  weight-normalised head) on synthetic volumes, and a ConvTranspose3d autoencoder decoder.
"""
import math

import numpy as np

import omnitensor as ot
from omnitensor import nn, optim
import omnitensor.nn.functional as F


# ------------------------------------------------------------- super resolution
class SuperResolutionNet(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))


def smooth_images(n, size, seed):
    """Sums of a few random 2-D sinusoids: images with structure to learn."""
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing="ij")
    out = np.zeros((n, 1, size, size), np.float32)
    for i in range(n):
        for _ in range(3):
            fx, fy, ph = rng.uniform(0.5, 3, 2).tolist() + [rng.uniform(0, 2 * math.pi)]
            out[i, 0] += np.sin(2 * math.pi * (fx * xx + fy * yy) + ph).astype(np.float32)
    return out / 3


def test_super_resolution_pixel_shuffle(device):
    ot.manual_seed(0)
    upscale = 2
    model = SuperResolutionNet(upscale).to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    criterion = nn.MSELoss()
    target = ot.tensor(smooth_images(8, 16, 0), device=device)
    lowres = F.interpolate(target, scale_factor=1 / upscale, mode="area")
    losses = []
    for _step in range(60):
        optimizer.zero_grad()
        loss = criterion(model(lowres), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0], losses[::10]
    with ot.no_grad():
        bicubic = F.interpolate(lowres, scale_factor=upscale, mode="bicubic",
                                align_corners=False)
        baseline = criterion(bicubic, target).item()
        learned = criterion(model(lowres), target).item()
    assert np.isfinite(baseline) and learned < 4 * baseline, (learned, baseline)


# ------------------------------------------------------------------- seq2seq
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = ot.arange(max_len).unsqueeze(1)
        div_term = ot.exp(ot.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = ot.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = ot.sin(position * div_term)
        pe[:, 0, 1::2] = ot.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[:x.size(0)]


class Seq2Seq(nn.Module):
    def __init__(self, ntoken, d_model=32, nhead=4, layers=1, ff=64):
        super().__init__()
        self.d_model = d_model
        self.src_emb = nn.Embedding(ntoken, d_model)
        self.tgt_emb = nn.Embedding(ntoken, d_model)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(d_model, nhead, layers, layers, ff, dropout=0.0)
        self.out = nn.Linear(d_model, ntoken)

    def forward(self, src, tgt, src_key_padding_mask=None):
        s = self.pos(self.src_emb(src) * math.sqrt(self.d_model))
        t = self.pos(self.tgt_emb(tgt) * math.sqrt(self.d_model))
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(0), device=src.device)
        h = self.transformer(s, t, tgt_mask=mask, src_key_padding_mask=src_key_padding_mask,
                             memory_key_padding_mask=src_key_padding_mask)
        return self.out(h)


def test_transformer_seq2seq_reverse(device):
    ot.manual_seed(0)
    rng = np.random.default_rng(0)
    pad, bos, ntoken, length, batch = 0, 1, 10, 5, 32
    model = Seq2Seq(ntoken).to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    criterion = nn.CrossEntropyLoss(ignore_index=pad)
    losses = []
    for _step in range(80):
        seq = rng.integers(2, ntoken, (length, batch))
        lens = rng.integers(3, length + 1, batch)
        for b, n in enumerate(lens):
            seq[n:, b] = pad
        rev = np.full_like(seq, pad)
        for b, n in enumerate(lens):
            rev[:n, b] = seq[:n, b][::-1]
        src = ot.tensor(seq, device=device)
        tgt_in = ot.tensor(np.concatenate([np.full((1, batch), bos), rev[:-1]]), device=device)
        tgt_out = ot.tensor(rev, device=device)
        kpm = src == pad
        optimizer.zero_grad()
        logits = model(src, tgt_in, src_key_padding_mask=kpm.t())
        loss = criterion(logits.reshape(-1, ntoken), tgt_out.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < 0.6 * first, (first, last)
    # greedy decoding runs end to end (eval mode, no grad)
    model.eval()
    with ot.no_grad():
        src = ot.tensor(rng.integers(2, ntoken, (length, 2)), device=device)
        out = ot.full((1, 2), bos, dtype=ot.int64, device=device)
        for _ in range(length):
            nxt = model(src, out)[-1].argmax(-1, keepdim=True).t()
            out = ot.cat([out, nxt], 0)
    assert tuple(out.shape) == (length + 1, 2)


# --------------------------------------------------------------------- 3-D nets
class VolumeNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(1, 6, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool3d(2),
            nn.Conv3d(6, 8, 3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool3d((2, 1, 1)))  # keep front/back halves
        self.head = nn.utils.parametrizations.weight_norm(nn.Linear(16, classes))

    def forward(self, x):
        return self.head(ot.flatten(self.features(x), 1))


def volumes(n, seed):
    """Class 0: a bright blob near the front, 1: near the back, 2: none."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.3, (n, 1, 8, 8, 8)).astype(np.float32)
    y = rng.integers(0, 3, n)
    for i, c in enumerate(y):
        if c < 2:
            z = 1 if c == 0 else 6
            x[i, 0, z - 1:z + 1, 2:6, 2:6] += 1.5
    return x, y


def test_conv3d_classifier_and_transposed_decoder(device):
    ot.manual_seed(0)
    model = VolumeNet().to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    x, y = volumes(24, 0)
    xb, yb = ot.tensor(x, device=device), ot.tensor(y, device=device)
    losses = []
    for _step in range(40):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses[::8]
    assert "head.parametrizations.weight.original0" in model.state_dict()

    decoder = nn.Sequential(nn.ConvTranspose3d(4, 4, 2, stride=2), nn.ReLU(),
                            nn.ConvTranspose3d(4, 1, 3, padding=1)).to(device)
    code = ot.randn(4, 4, 4, 4, 4, device=device)
    target = F.interpolate(xb[:4], size=(8, 8, 8), mode="trilinear", align_corners=False)
    opt = optim.Adam(decoder.parameters(), lr=1e-2)
    first = None
    for _step in range(30):
        opt.zero_grad()
        loss = F.mse_loss(decoder(code), target)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < 0.7 * first
