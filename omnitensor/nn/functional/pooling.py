"""Pooling: ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_avg_pool1d/2d``,
``adaptive_max_pool2d``, built on the im2col windows of ``conv.py``.

``max_pool2d`` is one graph node: the forward takes the max over each window, the backward
routes the gradient to the arg-max with a one-hot mask and :func:`col2im` (differentiable
in the incoming gradient, so double backward works). A pooling with stride == kernel (the
common 2x2 case) costs one reshape/permute copy, not ``kh * kw`` slices.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.graph import needs_grad, no_grad_ctx, record
from ...core import dtypes as _dt
from ...core.ops.creation import arange
from ...core.tensor import Tensor, _make
from ._utils import INDEX_CACHE, differentiable_backward, ntuple, pair
from ._windows import window_views, windows_adjoint
from .conv import col2im, im2col, out_size

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool2d"]


def _pool_args(x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               ceil_mode: bool, name: str) -> tuple:
    if x.ndim not in (3, 4):
        raise ValueError(f"{name}: expected a 3-D or 4-D input, got shape {tuple(x.shape)}")
    k = pair(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else pair(stride, "stride")
    p, d = pair(padding, "padding"), pair(dilation, "dilation")
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise ValueError(f"{name}: pad should be at most half of effective kernel size, but "
                         f"got pad={p}, kernel_size={k}")
    h, w = x.shape[-2:]
    ohw = (out_size(h, k[0], s[0], p[0], d[0], ceil_mode),
           out_size(w, k[1], s[1], p[1], d[1], ceil_mode))
    return k, s, p, d, ohw


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over ``kernel_size`` windows of ``(N, C, H, W)`` (or ``(C, H, W)``); with
    ``return_indices`` also the flat ``h * W + w`` index of each max (torch). NaN
    propagates; the gradient goes to the first maximum of each window (as torch's CPU
    kernel; in a window holding NaN, to its first element)."""
    k, s, p, d, ohw = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode,
                                 "max_pool2d")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    grad = needs_grad(x)
    be, dev = x.device.backend, x.device
    # elementwise maxima of kh * kw strided views (backend arrays, see _windows.py): no
    # window copy, and only ops that are fast on every backend (a reduction over a short
    # middle axis is not)
    lowest = -math.inf if x.dtype.kind == "f" else int(np.iinfo(x.dtype.np).min)
    views = window_views(x, k, s, p, d, ohw, lowest)
    out_d = views[0]
    for v in views[1:]:
        out_d = be.maximum(out_d, v)
    if len(views) == 1:
        out_d = be.copy(out_d)
    out = _make(out_d, dev, x.dtype)
    route = None
    if grad or return_indices:
        # one-hot of each window's first maximum (torch's CPU tie rule), as a float
        # (N, C, K, OH, OW) mask: the backward is then one multiply. Built with multiplies
        # rather than where(), which is several times slower on NumPy
        fdt = x.dtype.np if x.dtype.kind == "f" else np.dtype(np.float32)
        remaining = be.full(out_d.shape, 1, fdt, dev.index)
        n, c = x.shape[:2]
        key = (slice(0, n, 1), slice(0, c, 1), None, slice(0, ohw[0], 1), slice(0, ohw[1], 1))
        hits = []
        for v in views:
            hit = be.multiply(be.astype(be.equal(v, out_d), fdt), remaining)
            be.subtract(remaining, hit, out=remaining)
            hits.append(be.index(hit, key))
        route = _make(be.concat(hits, 2), dev, _dt.as_dtype(fdt))
    if grad:
        record("MaxPool2DWithIndicesBackward0", _max_pool_backward, out, (x,), route=route,
               hw=tuple(x.shape[2:]), k=k, s=s, p=p, d=d)
    if unbatched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    with no_grad_ctx():
        slots = arange(k[0] * k[1], device=dev).reshape(1, 1, -1, 1, 1)
        idx = (route.to(_dt.int64) * slots).sum(2)
        flat = _flat_indices(idx, x.shape[3], k, s, p, d, ohw)
    return out, (flat.squeeze(0) if unbatched else flat)


def _max_pool_backward(node: Any, g: Tensor) -> tuple:
    # route g to each window's arg-max slot, then sum the windows back
    route = node.route
    if differentiable_backward():
        # Tensor ops and the col2im graph node: differentiable in g (double backward)
        cols = g.unsqueeze(2) * route.to(g.dtype)
        return (col2im(cols, node.hw, node.k, node.s, node.p, node.d),)
    be = g.device.backend
    n, c, oh, ow = g.shape
    gd = be.reshape(g._data, (n, c, 1, oh, ow))
    rd = route._data if route.dtype is g.dtype else be.astype(route._data, g.dtype.np)
    cols = _make(be.multiply(rd, be.broadcast_to(gd, rd.shape)), g.device, g.dtype)
    return (windows_adjoint(cols, node.hw, node.k, node.s, node.p, node.d),)


def _flat_indices(idx: Tensor, width: int, k: tuple, s: tuple, p: tuple, d: tuple,
                  ohw: tuple) -> Tensor:
    dev = idx.device
    ki, kj = idx // k[1], idx % k[1]
    oh = arange(ohw[0], device=dev).reshape(ohw[0], 1)
    ow = arange(ohw[1], device=dev).reshape(1, ohw[1])
    h = oh * s[0] - p[0] + ki * d[0]
    w = ow * s[1] - p[1] + kj * d[1]
    return h * width + w


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, L)``: max_pool2d on a height-1 image."""
    one = lambda v, name, fill: (fill, ntuple(v, 1, name)[0])  # noqa: E731
    res = max_pool2d(input.unsqueeze(-2), one(kernel_size, "kernel_size", 1),
                     None if stride is None else one(stride, "stride", 1),
                     one(padding, "padding", 0), one(dilation, "dilation", 1), ceil_mode,
                     return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _avg_divisor(hw: tuple, k: tuple, s: tuple, p: tuple, ohw: tuple,
                 count_include_pad: bool) -> np.ndarray:
    """Per-output-position divisor, exactly as torch's kernel computes it."""
    out = np.empty(ohw, dtype=np.float64)
    for i in range(ohw[0]):
        h0 = i * s[0] - p[0]
        h1 = min(h0 + k[0], hw[0] + p[0])
        for j in range(ohw[1]):
            w0 = j * s[1] - p[1]
            w1 = min(w0 + k[1], hw[1] + p[1])
            size = (h1 - h0) * (w1 - w0)
            if not count_include_pad:
                size = (min(h1, hw[0]) - max(h0, 0)) * (min(w1, hw[1]) - max(w0, 0))
            out[i, j] = size
    return out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over ``kernel_size`` windows (torch's divisor rules for padding and
    ceil_mode)."""
    k, s, p, d, ohw = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode,
                                 "avg_pool2d")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    if x.dtype.kind not in "fc":
        raise TypeError(f"avg_pool2d: expected a floating tensor, got {x.dtype.name}")
    sums = im2col(x, k, s, p, d, ohw).sum(2)
    if divisor_override:
        out = sums / divisor_override
    else:
        hw = tuple(x.shape[2:])
        div = _avg_divisor(hw, k, s, p, ohw, count_include_pad)
        if np.all(div == div.flat[0]):
            out = sums / float(div.flat[0])
        else:
            key = ("avgdiv", hw, k, s, p, ohw, count_include_pad, x.dtype.name)
            out = sums / INDEX_CACHE.get(key, x.device, lambda: div.astype(x.dtype.np))
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Average pooling of ``(N, C, L)``: avg_pool2d on a height-1 image."""
    one = lambda v, name, fill: (fill, ntuple(v, 1, name)[0])  # noqa: E731
    return avg_pool2d(input.unsqueeze(-2), one(kernel_size, "kernel_size", 1),
                      None if stride is None else one(stride, "stride", 1),
                      one(padding, "padding", 0), ceil_mode, count_include_pad).squeeze(-2)


def _adaptive_size(output_size: Any, hw: tuple) -> tuple[int, int]:
    if isinstance(output_size, (tuple, list)):
        sizes = tuple(hw[i] if v is None else int(v) for i, v in enumerate(output_size))
        if len(sizes) != 2:
            raise ValueError(f"output_size must be an int or a pair, got {output_size}")
        return sizes  # type: ignore[return-value]
    return (int(output_size), int(output_size))


def _bin_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) averaging matrix of adaptive pooling's bins."""
    m = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        a = (i * n_in) // n_out
        b = -((-(i + 1) * n_in) // n_out)  # ceil
        m[i, a:b] = 1.0 / (b - a)
    return m


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average pooling to a fixed output size (torch's bins: ``floor(i * H / OH)`` to
    ``ceil((i + 1) * H / OH)``)."""
    if input.ndim not in (3, 4):
        raise ValueError(f"adaptive_avg_pool2d: expected a 3-D or 4-D input, got shape "
                         f"{tuple(input.shape)}")
    h, w = input.shape[-2:]
    oh, ow = _adaptive_size(output_size, (h, w))
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    # uneven bins: two small matmuls with averaging matrices (exact and differentiable)
    dev, dt = input.device, input.dtype
    mh = INDEX_CACHE.get(("adapt", h, oh, dt.name), dev, lambda: _bin_matrix(h, oh).astype(dt.np))
    mw = INDEX_CACHE.get(("adapt", w, ow, dt.name), dev, lambda: _bin_matrix(w, ow).astype(dt.np))
    return (mh @ input) @ mw.T


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive average pooling of ``(N, C, L)`` to ``output_size``."""
    return adaptive_avg_pool2d(input.unsqueeze(-2),
                               (1, ntuple(output_size, 1, "output_size")[0])).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size; the input size must be a multiple of it."""
    h, w = input.shape[-2:]
    oh, ow = _adaptive_size(output_size, (h, w))
    if h % oh or w % ow:
        raise NotImplementedError(f"adaptive_max_pool2d: input size {(h, w)} is not a "
                                  f"multiple of output size {(oh, ow)}")
    return max_pool2d(input, (h // oh, w // ow), return_indices=return_indices)
