"""The conformance table's matmul, convolution and ``nn.functional`` rows, each against a
NumPy float64 reference written here from the op's definition (no torch needed).

A row lists its variants: ``(label, operands, keyword arguments)``. An operand is a shape
(random floats of the row's dtype), ``Ints(high, shape)`` (int64 class indices in
``[0, high)``) or None (an absent optional tensor, e.g. no bias). The keyword arguments go
to both the omnitensor call and the reference."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .cases import COMPLEX, Case

F32_64 = ("float32", "float64")


@dataclass(frozen=True)
class Ints:
    """An int64 operand of ``shape`` with values in ``[0, high)`` (targets, indices)."""
    high: int
    shape: tuple


def _f(name: str) -> Callable[..., Any]:
    """``ot.nn.functional.<name>`` called with the row's operands and keywords."""
    return lambda ot, *xs, **kw: getattr(ot.nn.functional, name)(*xs, **kw)


def _row(name: str, call: Callable, ref: Callable, variants: tuple,
         dtypes: tuple = F32_64, **kw: Any) -> Case:
    return Case(name, call, ref, dtypes, len(variants[0][1]), specials=False,
                variants=variants, **kw)


def _tup(v: Any, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


# ------------------------------------------------------------------ references
def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: Any = 1,
          padding: Any = 0, dilation: Any = 1, groups: int = 1) -> np.ndarray:
    """N-d cross-correlation (torch's conv): windows of the zero-padded input, dilated and
    strided, contracted with each group's filters."""
    nd = x.ndim - 2
    st, pd, dl = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    ks = w.shape[2:]
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pd])
    span = [dl[i] * (ks[i] - 1) + 1 for i in range(nd)]
    win = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    win = win[(Ellipsis,) + tuple(slice(None, None, d) for d in dl)]
    win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in st)]
    n, c = x.shape[:2]
    oc = w.shape[0]
    win = win.reshape(n, groups, c // groups, *win.shape[2:])
    wg = w.reshape(groups, oc // groups, c // groups, *ks)
    out_ax, k_ax = "opq"[:nd], "klm"[:nd]
    y = np.einsum(f"ngc{out_ax}{k_ax},gfc{k_ax}->ngf{out_ax}", win, wg)
    y = y.reshape(n, oc, *y.shape[3:])
    return y if b is None else y + b.reshape((1, oc) + (1,) * nd)


def _pool(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
          kind: str = "max") -> np.ndarray:
    """2-d max or average pooling (average counts the zero padding, torch's default)."""
    ks = _tup(kernel_size, 2)
    st = _tup(stride if stride is not None else kernel_size, 2)
    pd = _tup(padding, 2)
    fill = -np.inf if kind == "max" else 0.0
    x = np.pad(x, [(0, 0), (0, 0), (pd[0], pd[0]), (pd[1], pd[1])], constant_values=fill)
    win = sliding_window_view(x, ks, axis=(2, 3))[:, :, ::st[0], ::st[1]]
    return win.max(axis=(-2, -1)) if kind == "max" else win.mean(axis=(-2, -1))


def _adaptive_avg(x: np.ndarray, output_size: Any) -> np.ndarray:
    oh, ow = _tup(output_size, 2)
    h, w = x.shape[-2:]
    rows = [(i * h // oh, -(-(i + 1) * h // oh)) for i in range(oh)]
    cols = [(j * w // ow, -(-(j + 1) * w // ow)) for j in range(ow)]
    return np.stack([np.stack([x[..., r0:r1, c0:c1].mean(axis=(-2, -1)) for c0, c1 in cols],
                              -1) for r0, r1 in rows], -2)


def _log_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    m = x.max(dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(dim, keepdims=True))


def _cross_entropy(logits: np.ndarray, target: np.ndarray, reduction: str = "mean",
                   label_smoothing: float = 0.0) -> np.ndarray:
    logp = _log_softmax(logits, 1)
    nll = -np.take_along_axis(logp, target[:, None], 1)[:, 0]
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(1)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _layer_norm(x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None,
                normalized_shape: tuple, eps: float = 1e-5) -> np.ndarray:
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _group_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, num_groups: int,
                eps: float = 1e-5) -> np.ndarray:
    n, c = x.shape[:2]
    g = x.reshape(n, num_groups, -1)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return g.reshape(x.shape) * w.reshape(shape) + b.reshape(shape)


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
               is_causal: bool = False) -> np.ndarray:
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if is_causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    return np.exp(_log_softmax(s)) @ v


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    from scipy.special import erf
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


# ------------------------------------------------------------------------ rows
NN = [
    _row("matmul", lambda ot, a, b: ot.matmul(a, b), np.matmul, (
        ("matrix", [(3, 4), (4, 5)], {}), ("batched", [(2, 3, 4), (4, 5)], {}),
        ("broadcast batch", [(2, 1, 3, 4), (3, 4, 2)], {}),
        ("vector-matrix", [(4,), (4, 5)], {}), ("matrix-vector", [(3, 4), (4,)], {}),
        ("k=0", [(3, 0), (0, 2)], {})), dtypes=F32_64 + COMPLEX),
    _row("linear", _f("linear"),
         lambda x, w, b=None: x @ w.T + (0 if b is None else b), (
             ("bias", [(5, 4), (3, 4), (3,)], {}), ("no bias", [(2, 5, 4), (3, 4), None], {}))),
    _row("conv1d", _f("conv1d"), _conv, (
        ("plain", [(2, 3, 10), (4, 3, 3), (4,)], {}),
        ("stride 2, padding 1", [(2, 3, 10), (4, 3, 3), None], {"stride": 2, "padding": 1}),
        ("dilation 2, groups 3", [(1, 3, 9), (6, 1, 2), (6,)],
         {"dilation": 2, "groups": 3}))),
    _row("conv2d", _f("conv2d"), _conv, (
        ("plain", [(2, 3, 7, 6), (4, 3, 3, 3), (4,)], {}),
        ("stride 2, padding 1", [(2, 3, 7, 6), (4, 3, 3, 3), None],
         {"stride": 2, "padding": 1}),
        ("dilation 2, groups 2", [(1, 4, 8, 8), (4, 2, 3, 2), (4,)],
         {"dilation": 2, "groups": 2}),
        ("1x1", [(2, 5, 4, 4), (3, 5, 1, 1), None], {}))),
    _row("softmax", _f("softmax"), lambda x, dim: np.exp(_log_softmax(x, dim)), (
        ("last dim", [(3, 7)], {"dim": -1}), ("dim 0", [(4, 3, 5)], {"dim": 0}))),
    _row("log_softmax", _f("log_softmax"), _log_softmax, (
        ("last dim", [(3, 7)], {"dim": -1}), ("dim 1", [(2, 4, 3)], {"dim": 1}))),
    _row("layer_norm", lambda ot, x, w, b, normalized_shape:
         ot.nn.functional.layer_norm(x, normalized_shape, w, b), _layer_norm, (
        ("affine", [(3, 6), (6,), (6,)], {"normalized_shape": (6,)}),
        ("2 dims, no affine", [(2, 3, 4, 5), None, None], {"normalized_shape": (4, 5)}))),
    _row("group_norm", lambda ot, x, w, b, num_groups:
         ot.nn.functional.group_norm(x, num_groups, w, b), _group_norm, (
        ("2 groups", [(2, 4, 3, 3), (4,), (4,)], {"num_groups": 2}),)),
    _row("cross_entropy", _f("cross_entropy"), _cross_entropy, (
        ("mean", [(6, 5), Ints(5, (6,))], {}),
        ("sum", [(6, 5), Ints(5, (6,))], {"reduction": "sum"}),
        ("label smoothing", [(6, 5), Ints(5, (6,))], {"label_smoothing": 0.1}))),
    _row("mse_loss", _f("mse_loss"), lambda a, b: np.mean((a - b) ** 2), (
        ("mean", [(4, 5), (4, 5)], {}),)),
    _row("max_pool2d", _f("max_pool2d"), _pool, (
        ("2x2", [(2, 3, 8, 8)], {"kernel_size": 2}),
        ("3x3 stride 2 padding 1", [(1, 2, 7, 6)],
         {"kernel_size": 3, "stride": 2, "padding": 1}))),
    _row("avg_pool2d", _f("avg_pool2d"), lambda x, **kw: _pool(x, kind="avg", **kw), (
        ("2x2", [(2, 3, 8, 8)], {"kernel_size": 2}),
        ("3x3 stride 2 padding 1", [(1, 2, 7, 6)],
         {"kernel_size": 3, "stride": 2, "padding": 1}))),
    _row("adaptive_avg_pool2d", _f("adaptive_avg_pool2d"), _adaptive_avg, (
        ("to 3x2", [(2, 3, 7, 5)], {"output_size": (3, 2)}),
        ("global", [(2, 3, 4, 4)], {"output_size": 1}))),
    _row("embedding", lambda ot, idx, w: ot.nn.functional.embedding(idx, w),
         lambda idx, w: w[idx], (("indices 4x5", [Ints(10, (4, 5)), (10, 3)], {}),)),
    _row("scaled_dot_product_attention", _f("scaled_dot_product_attention"), _attention, (
        ("plain", [(2, 5, 4), (2, 6, 4), (2, 6, 3)], {}),
        ("causal", [(1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4)], {"is_causal": True}))),
    _row("gelu", _f("gelu"), _gelu, (
        ("erf", [(3, 7)], {}), ("tanh", [(3, 7)], {"approximate": "tanh"}))),
    _row("silu", _f("silu"), lambda x: x / (1 + np.exp(-x)), (("3x7", [(3, 7)], {}),)),
]


def make_operand(spec: Any, dtype: str, rng: np.random.Generator) -> np.ndarray | None:
    """One operand of a row variant (see the module docstring)."""
    if spec is None:
        return None
    if isinstance(spec, Ints):
        return rng.integers(0, spec.high, spec.shape).astype(np.int64)
    arr = rng.uniform(-2, 2, spec)
    if dtype in COMPLEX:
        arr = arr + 1j * rng.uniform(-2, 2, spec)
    return arr.astype(dtype)
