"""Shared helpers of the nn tests: the widest float dtype a device has, tensors from NumPy,
gradcheck tolerances, and NumPy reference implementations of the layers."""
from __future__ import annotations

from typing import Any

import numpy as np

import omnitensor as ot
from omnitensor.autograd import gradcheck

RNG_SEED = 0


def fdtype(device: str) -> Any:
    """float64 where the device has it (gradchecks need it), else float32."""
    return ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32


def T(a: Any, device: str, dtype: Any = None, rg: bool = False) -> ot.Tensor:
    """A tensor from NumPy data on ``device`` (``dtype`` default: the widest float)."""
    a = np.asarray(a)
    if dtype is None and a.dtype.kind == "f":
        dtype = fdtype(device)
    return ot.tensor(a, dtype=dtype, device=device, requires_grad=rg)


def N(t: Any) -> np.ndarray:
    """A NumPy copy (a cpu tensor's numpy() shares memory; later in-place ops would
    change it)."""
    return np.array(t.detach().cpu().numpy()) if isinstance(t, ot.Tensor) else np.asarray(t)


def tol(device: str) -> dict:
    """assert_allclose tolerances for results in fdtype(device) vs a float64 reference."""
    return dict(rtol=1e-9, atol=1e-10) if fdtype(device) is ot.float64 else \
        dict(rtol=2e-4, atol=2e-5)


def check_grad(fn: Any, inputs: list, device: str) -> None:
    """gradcheck with the tolerances of the device's float dtype."""
    kw = dict(eps=1e-6, atol=1e-5, rtol=1e-3) if fdtype(device) is ot.float64 else \
        dict(eps=1e-3, atol=3e-2, rtol=3e-2)
    assert gradcheck(fn, inputs, **kw)


def rng(seed: int = RNG_SEED) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ NumPy references
def np_conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple,
              padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """Direct cross-correlation, one kernel offset at a time."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def np_conv_transpose2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple,
                        padding: tuple, output_padding: tuple, groups: int,
                        dilation: tuple) -> np.ndarray:
    """Scatter each input pixel's contribution (the definition of the transpose)."""
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw), (oph, opw) = stride, padding, dilation, output_padding
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    out = np.zeros((n, cog * groups, full_h, full_w))
    cig = cin // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cig:(g + 1) * cig],
                                    w[g * cig:(g + 1) * cig, :, i, j])
                out[:, g * cog:(g + 1) * cog, i * dh:i * dh + sh * (h - 1) + 1:sh,
                    j * dw:j * dw + sw * (wd - 1) + 1:sw] += contrib
    out = out[:, :, ph:full_h - ph, pw:full_w - pw] if (ph or pw) else out
    if b is not None:
        out = out + b.reshape(1, -1, 1, 1)
    return out


def np_max_pool2d(x: np.ndarray, k: tuple, s: tuple, p: tuple, d: tuple = (1, 1),
                  ceil_mode: bool = False) -> np.ndarray:
    n, c, h, w = x.shape
    ohw = []
    for size, kk, ss, pp, dd in zip((h, w), k, s, p, d):
        span = size + 2 * pp - dd * (kk - 1) - 1
        o = (span + (ss - 1 if ceil_mode else 0)) // ss + 1
        if ceil_mode and (o - 1) * ss >= size + pp:
            o -= 1
        ohw.append(o)
    out = np.full((n, c, ohw[0], ohw[1]), -np.inf)
    for a in range(ohw[0]):
        for b in range(ohw[1]):
            for i in range(k[0]):
                for j in range(k[1]):
                    hh, ww = a * s[0] - p[0] + i * d[0], b * s[1] - p[1] + j * d[1]
                    if 0 <= hh < h and 0 <= ww < w:
                        out[:, :, a, b] = np.maximum(out[:, :, a, b], x[:, :, hh, ww])
    return out


def np_avg_pool2d(x: np.ndarray, k: tuple, s: tuple, p: tuple, ceil_mode: bool = False,
                  count_include_pad: bool = True) -> np.ndarray:
    """torch's CPU kernel, written with loops."""
    n, c, h, w = x.shape
    ohw = []
    for size, kk, ss, pp in zip((h, w), k, s, p):
        span = size + 2 * pp - kk
        o = (span + (ss - 1 if ceil_mode else 0)) // ss + 1
        if ceil_mode and (o - 1) * ss >= size + pp:
            o -= 1
        ohw.append(o)
    out = np.zeros((n, c, ohw[0], ohw[1]))
    for a in range(ohw[0]):
        for b in range(ohw[1]):
            h0, w0 = a * s[0] - p[0], b * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            if not count_include_pad:
                size = (h1 - h0) * (w1 - w0)
            out[:, :, a, b] = x[:, :, h0:h1, w0:w1].sum((2, 3)) / size
    return out


def np_adaptive_avg_pool2d(x: np.ndarray, out_hw: tuple) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, c) + tuple(out_hw))
    for a in range(out_hw[0]):
        h0, h1 = (a * h) // out_hw[0], -((-(a + 1) * h) // out_hw[0])
        for b in range(out_hw[1]):
            w0, w1 = (b * w) // out_hw[1], -((-(b + 1) * w) // out_hw[1])
            out[:, :, a, b] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    return out


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    s = x - x.max(axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis, keepdims=True))


def np_layer_norm(x: np.ndarray, axes: tuple, eps: float = 1e-5) -> np.ndarray:
    m = x.mean(axes, keepdims=True)
    v = x.var(axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


def np_mha(q: np.ndarray, k: np.ndarray, v: np.ndarray, w_in: np.ndarray, b_in: np.ndarray,
           w_out: np.ndarray, b_out: np.ndarray, heads: int,
           mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sequence-first (L, N, E) multi-head attention; ``mask`` additive (N*H or 1, L, S)."""
    e = q.shape[-1]
    hd = e // heads
    wq, wk, wv = np.split(w_in, 3)
    bq, bk, bv = np.split(b_in, 3)
    qp, kp, vp = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    L, n, _ = q.shape
    S = k.shape[0]
    qh = qp.reshape(L, n * heads, hd).transpose(1, 0, 2)
    kh = kp.reshape(S, n * heads, hd).transpose(1, 0, 2)
    vh = vp.reshape(S, n * heads, hd).transpose(1, 0, 2)
    scores = qh @ kh.transpose(0, 2, 1) / np.sqrt(hd)
    if mask is not None:
        scores = scores + mask
    attn = np_softmax(scores, -1)
    out = (attn @ vh).transpose(1, 0, 2).reshape(L, n, e) @ w_out.T + b_out
    return out, attn.reshape(n, heads, L, S).mean(1)
