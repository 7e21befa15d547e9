"""Kernel windows (im2col) and their adjoint (col2im) on backend primitives.

These are data-only helpers (no graph: ``conv.py`` wraps them in graph nodes), so they
call the backend contract directly (``backends/base.py``): constant ``pad``, basic
``index`` views (normalised keys: ``slice(start, stop, step)`` with in-range bounds, ``None``
inserts an axis), ``reshape``/``permute``, ``concat`` and in-place ``add(out=)`` through a
strided view. Every backend has these, and a window gather costs ``kh * kw`` views and one
concat instead of as many Tensor-level slicing ops (each with its key normalisation).
"""
from __future__ import annotations

from typing import Any

from ...core.raw import data as raw_data, wrap
from ...core.tensor import Tensor

Pair = tuple[int, int]

_PY = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def geometry(kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> tuple[Pair, bool]:
    """(padded size every window needs, whether windows tile without overlap or gaps)."""
    need = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in
                 zip(out_hw, stride, dilation, kernel))
    tiles = all(s == k and d == 1 for s, k, d in zip(stride, kernel, dilation))
    return need, tiles  # type: ignore[return-value]


def _all(n: int) -> slice:
    return slice(0, n, 1)


def padded(x: Tensor, padding: Pair, need: Pair, pad_value: float) -> Any:
    """x's backend array padded by ``padding`` on both sides (more on the right when
    ceil_mode needs it) and cut to exactly ``need``."""
    be = x.device.backend
    n, c, h, w = x.shape
    (ph, pw) = padding
    extra = (max(need[0] - h - 2 * ph, 0), max(need[1] - w - 2 * pw, 0))
    data = raw_data(x)
    if ph or pw or extra[0] or extra[1]:
        data = be.pad(data, ((0, 0), (0, 0), (ph, ph + extra[0]), (pw, pw + extra[1])),
                      _PY[x.dtype.kind](pad_value))
    if data.shape[2] != need[0] or data.shape[3] != need[1]:
        data = be.index(data, (_all(n), _all(c), _all(need[0]), _all(need[1])))
    return data


def window_views(x: Tensor, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
                 out_hw: Pair, pad_value: float = 0.0) -> list[Any]:
    """The ``kh * kw`` strided backend views ``(N, C, OH, OW)``, one per kernel slot."""
    need, _ = geometry(kernel, stride, dilation, out_hw)
    data = padded(x, padding, need, pad_value)
    be = x.device.backend
    n, c = x.shape[:2]
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    hs, ws = sh * (out_hw[0] - 1) + 1, sw * (out_hw[1] - 1) + 1
    return [be.index(data, (_all(n), _all(c), slice(i * dh, i * dh + hs, sh),
                            slice(j * dw, j * dw + ws, sw)))
            for i in range(kh) for j in range(kw)]


def windows(x: Tensor, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
            out_hw: Pair, pad_value: float = 0.0) -> Tensor:
    """``(N, C, H, W) -> (N, C, kh * kw, OH, OW)``: every kernel window (a new array)."""
    n, c = x.shape[:2]
    (kh, kw), (oh, ow) = kernel, out_hw
    be = x.device.backend
    if x.numel() == 0 or oh * ow == 0:
        return wrap(be.full((n, c, kh * kw, oh, ow), _PY[x.dtype.kind](0), x.dtype.np,
                            x.device.index), x)
    need, tiles = geometry(kernel, stride, dilation, out_hw)
    if tiles:
        # non-overlapping windows (pooling with stride == kernel): one reshape copy
        data = padded(x, padding, need, pad_value)
        data = be.permute(be.reshape(data, (n, c, oh, kh, ow, kw)), (0, 1, 3, 5, 2, 4))
        return wrap(be.reshape(data, (n, c, kh * kw, oh, ow)), x)
    if kh * kw == 1:
        view = window_views(x, kernel, stride, padding, dilation, out_hw, pad_value)[0]
        return wrap(be.reshape(be.copy(view), (n, c, 1, oh, ow)), x)
    views = window_views(x, kernel, stride, padding, dilation, out_hw, pad_value)
    # a None entry inserts the kernel-slot axis as a view; one concat copies them all
    parts = [be.index(v, (_all(n), _all(c), None, _all(oh), _all(ow))) for v in views]
    return wrap(be.concat(parts, 2), x)


def windows_adjoint(cols: Tensor, hw: Pair, kernel: Pair, stride: Pair, padding: Pair,
                    dilation: Pair) -> Tensor:
    """The adjoint of :func:`windows`: ``(N, C, K, OH, OW) -> (N, C, H, W)``, summing
    where windows overlap."""
    n, c, _k, oh, ow = cols.shape
    h, w = hw
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    be = cols.device.backend
    dt, dev = cols.dtype, cols.device
    need, tiles = geometry(kernel, stride, dilation, (oh, ow))
    full = (max(h + 2 * ph, need[0]), max(w + 2 * pw, need[1]))
    zero = _PY[dt.kind](0)
    if cols.numel() == 0:
        return wrap(be.full((n, c, h, w), zero, dt.np, dev.index), device=dev, dtype=dt)
    data = raw_data(cols)
    if tiles:
        buf = be.reshape(be.permute(be.reshape(data, (n, c, kh, kw, oh, ow)),
                                    (0, 1, 4, 2, 5, 3)), (n, c, need[0], need[1]))
        if need != full:
            buf = be.pad(buf, ((0, 0), (0, 0), (0, full[0] - need[0]),
                               (0, full[1] - need[1])), zero)
    else:
        buf = be.full((n, c) + full, zero, dt.np, dev.index)
        hs, ws = sh * (oh - 1) + 1, sw * (ow - 1) + 1
        k = 0
        for i in range(kh):
            for j in range(kw):
                view = be.index(buf, (_all(n), _all(c), slice(i * dh, i * dh + hs, sh),
                                      slice(j * dw, j * dw + ws, sw)))
                be.add(view, be.index(data, (_all(n), _all(c), k, _all(oh), _all(ow))),
                       out=view)
                k += 1
    if ph or pw or full != (h + 2 * ph, w + 2 * pw):
        buf = be.index(buf, (_all(n), _all(c), slice(ph, ph + h, 1), slice(pw, pw + w, 1)))
    return wrap(buf, device=dev, dtype=dt)
