"""Pooling of any spatial rank: ``max_pool1d/2d/3d`` (``return_indices``),
``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``, ``adaptive_max_pool1d/2d/3d``,
``max_unpool1d/2d/3d``, ``lp_pool1d/2d``; built on the windows of ``_windows.py``.

``max_pool`` is one graph node: the forward is the elementwise maximum of the ``K`` slot
views (no window copy; reductions over a short middle axis are slow on some backends),
the backward routes the gradient to each window's first maximum (torch's CPU tie rule)
with a one-hot mask and :func:`col2im`, differentiable in the incoming gradient. Adaptive
average pools are separable averaging matmuls; adaptive max pools gather each (possibly
uneven) bin, padded by repeating an in-bin element, and take a maximum over it.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ...core import dtypes as _dt
from ...core.capture_hooks import composite
from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.ops.creation import arange, zeros
from ...core.tensor import Tensor
from ...core.trusted import ops as trusted_ops, ops_for
from ._utils import INDEX_CACHE, differentiable_backward
from ._windows import (Ints, check_rank, output_size_arg, pool_geometry, slot_views,
                       spatial, windows_adjoint)
from .conv import col2im, im2col

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]


# ------------------------------------------------------------------------ max
def _lowest(x: Tensor) -> float:
    return -math.inf if x.dtype.kind == "f" else int(np.iinfo(x.dtype.np).min)


def max_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
             dilation: Any, ceil_mode: bool, return_indices: bool, nd: int, op: str) -> Any:
    """N-d max pooling; with ``return_indices`` also the flat index of each maximum in
    the input's spatial dims (torch's layout)."""
    unbatched, k, s, p, d, out = pool_geometry(op, nd, input, kernel_size, stride, padding,
                                               dilation, ceil_mode)
    x = input.unsqueeze(0) if unbatched else input
    grad = needs_grad(x)
    with no_grad_ctx():
        views = slot_views(x, k, s, p, d, out, _lowest(x))
        ops = ops_for(x)  # one device and dtype: every op below may skip its checks
        y = views[0]
        for v in views[1:]:
            y = ops.maximum(y, v)
        if len(views) == 1:
            y = ops.clone(y)
        route = None
        if grad or return_indices:
            # one-hot of each window's first maximum, as a (N, C, K, *out) mask
            fdt = x.dtype if x.dtype.kind == "f" else _dt.float32
            # the route is floating whatever x is: one device and one floating dtype
            fops = trusted_ops
            remaining = fops.full(tuple(y.shape), 1, dtype=fdt, device=x.device)
            hits = []
            for v in views:
                hit = fops.mul_(ops.to(ops.eq(v, y), fdt), remaining)
                fops.sub_(remaining, hit)
                hits.append(hit)
            route = fops.stack(hits, 2)
    if grad:
        record(f"MaxPool{nd}DWithIndicesBackward0", _max_pool_backward, y, (x,), route=route,
               size=tuple(x.shape[2:]), k=k, s=s, p=p, d=d)
    if unbatched:
        y = y.squeeze(0)
    if not return_indices:
        return y
    assert route is not None  # built above when return_indices
    with no_grad_ctx():
        slot = (route.to(_dt.int64) * arange(math.prod(k), device=x.device)
                .reshape((1, 1, -1) + (1,) * nd)).sum(2)
        flat = _flat_indices(slot, tuple(x.shape[2:]), k, s, p, d, out)
    return y, (flat.squeeze(0) if unbatched else flat)


def _max_pool_backward(node: Any, g: Tensor) -> tuple:
    # route g to each window's arg-max slot, then sum the windows back; under create_graph
    # this is a differentiable product and the col2im node (double backward)
    if differentiable_backward():
        cols = g.unsqueeze(2) * node.route.to(g.dtype)
        return (col2im(cols, node.size, node.k, node.s, node.p, node.d),)
    route = node.route
    ops = ops_for(g, route)
    cols = ops.mul(ops.unsqueeze(g, 2), ops.to(route, g.dtype))
    return (windows_adjoint(cols, node.size, node.k, node.s, node.p, node.d),)


def _flat_indices(slot: Tensor, size: Ints, k: Ints, s: Ints, p: Ints, d: Ints,
                  out: Ints) -> Tensor:
    """Flat input index of the kernel slot ``slot`` of every output position."""
    dev, nd = slot.device, len(k)
    flat = None
    rest = slot
    for i in reversed(range(nd)):
        ki = rest % k[i]
        rest = rest // k[i]
        pos = arange(out[i], device=dev).reshape((out[i],) + (1,) * (nd - 1 - i))
        coord = pos * s[i] - p[i] + ki * d[i]
        term = coord * math.prod(size[i + 1:])
        flat = term if flat is None else flat + term
    assert flat is not None  # nd >= 1
    return flat


@composite("max_pool1d")
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over windows of ``(N, C, L)`` (or ``(C, L)``)."""
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                    1, "max_pool1d")


@composite("max_pool2d")
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over windows of ``(N, C, H, W)`` (or ``(C, H, W)``); NaN propagates."""
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                    2, "max_pool2d")


@composite("max_pool3d")
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over windows of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``)."""
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                    3, "max_pool3d")


# ------------------------------------------------------------------------ avg
def _avg_divisor(size: Ints, k: Ints, s: Ints, p: Ints, out: Ints,
                 count_include_pad: bool) -> np.ndarray:
    """Per-output-position divisor, exactly as torch's kernel computes it (separable:
    the product of per-axis window lengths)."""
    div = np.ones((), dtype=np.float64)
    for n, kk, ss, pp, o in zip(size, k, s, p, out):
        a = np.arange(o) * ss - pp
        b = np.minimum(a + kk, n + pp)
        length = b - a if count_include_pad else np.minimum(b, n) - np.maximum(a, 0)
        div = np.multiply.outer(div, length.astype(np.float64))
    return div


def avg_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
             ceil_mode: bool, count_include_pad: bool, divisor_override: Any, nd: int,
             op: str) -> Tensor:
    """N-d average pooling (torch's divisor rules for padding and ceil_mode)."""
    unbatched, k, s, p, d, out = pool_geometry(op, nd, input, kernel_size, stride, padding,
                                               1, ceil_mode)
    x = input.unsqueeze(0) if unbatched else input
    if x.dtype.kind not in "fc" and x.dtype.name != "int64":  # torch's CPU kernels' dtypes
        raise TypeError(f"{op}: expected a floating or int64 tensor, got {x.dtype.name}")
    if divisor_override is not None and divisor_override == 0:
        raise ValueError(f"{op}: divisor must be not zero")
    integer = x.dtype.kind == "i"  # torch: int64 windows average by truncating division
    sums = im2col(x, k, s, p, d, out).sum(2)
    if divisor_override:
        div: Any = int(divisor_override) if integer else divisor_override
    else:
        size = tuple(x.shape[2:])
        full = _avg_divisor(size, k, s, p, out, count_include_pad)
        if np.all(full == full.flat[0]):
            div = int(full.flat[0]) if integer else float(full.flat[0])
        else:
            key = ("avgdiv", size, k, s, p, out, count_include_pad, x.dtype.name)
            div = INDEX_CACHE.get(key, x.device, lambda: full.astype(x.dtype.np))
    y = sums.div(div, rounding_mode="trunc").to(x.dtype) if integer else sums / div
    return y.squeeze(0) if unbatched else y


@composite("avg_pool1d")
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over windows of ``(N, C, L)``."""
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                    1, "avg_pool1d")


@composite("avg_pool2d")
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over windows of ``(N, C, H, W)``."""
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override, 2, "avg_pool2d")


@composite("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over windows of ``(N, C, D, H, W)``."""
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override, 3, "avg_pool3d")


def lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any,  # noqa: A002
            ceil_mode: bool, nd: int, op: str) -> Tensor:
    """Power-average pooling: ``(sum x^p)^(1/p)`` over each window (torch's formula:
    ``sign(a) * relu(|a|)`` of the average times the kernel size, to the ``1/p``)."""
    k = pool_geometry(op, nd, input, kernel_size, stride, 0, 1, ceil_mode)[1]
    a = avg_pool(input.pow(norm_type), k, stride, 0, ceil_mode, True, None, nd, op)
    return (a.sign() * a.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of ``(N, C, L)``."""
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of ``(N, C, H, W)``."""
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of ``(N, C, D, H, W)``."""
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


# torch's *_with_indices spellings: the pools with return_indices=True
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ------------------------------------------------------------------- adaptive
def _bins(n_in: int, n_out: int) -> list[tuple[int, int]]:
    """torch's adaptive bins: ``floor(i * n / o)`` to ``ceil((i + 1) * n / o)``."""
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _bin_matrix_as(np_dtype: Any, n_in: int, n_out: int) -> np.ndarray:
    """:func:`_bin_matrix` in ``np_dtype`` (the input's dtype)."""
    return _bin_matrix(n_in, n_out).astype(np_dtype)


def _bin_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) averaging matrix of adaptive pooling's bins."""
    m = np.zeros((n_out, n_in), dtype=np.float64)
    for i, (a, b) in enumerate(_bins(n_in, n_out)):
        m[i, a:b] = 1.0 / (b - a)
    return m


def adaptive_avg_pool(input: Tensor, output_size: Any, nd: int, op: str) -> Tensor:  # noqa: A002
    """N-d average pooling to a fixed output size: one averaging matmul per axis
    (exact and differentiable), or a plain average pool when the bins are even."""
    check_rank(input, nd, op)
    size = spatial(input.shape, nd)
    out = output_size_arg(output_size, size, op)
    if input.dtype.kind not in "fc":
        raise TypeError(f"{op}: expected a floating tensor, got {input.dtype.name}")
    if all(o > 0 and n % o == 0 for n, o in zip(size, out)):
        k = tuple(n // o for n, o in zip(size, out))
        return avg_pool(input, k, k, 0, False, True, None, nd, op)
    dev, dt = input.device, input.dtype
    y = input
    for i, (n, o) in enumerate(zip(size, out)):
        m = INDEX_CACHE.get(("adapt", n, o, dt.name), dev,
                            functools.partial(_bin_matrix_as, dt.np, n, o))
        axis = input.ndim - nd + i
        y = (y.movedim(axis, -1) @ m.mT).movedim(-1, axis)
    return y


@composite("adaptive_avg_pool1d")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive average pooling of ``(N, C, L)`` to ``output_size``."""
    return adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


@composite("adaptive_avg_pool2d")
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive average pooling of ``(N, C, H, W)`` (an int, a pair, None keeps a dim)."""
    return adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive average pooling of ``(N, C, D, H, W)``."""
    return adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_gather_index(size: Ints, out: Ints) -> tuple[np.ndarray, np.ndarray]:
    """(flat input index ``(prod(out) * L,)``, flat index per output ``(*out, L)``) of
    every bin, each bin padded to the longest by repeating its first element."""
    per_axis = []
    for n, o in zip(size, out):
        bins = _bins(n, o)
        width = max(b - a for a, b in bins)
        idx = np.array([[a + j if a + j < b else a for j in range(width)] for a, b in bins],
                       dtype=np.int64)
        per_axis.append(idx)  # (o, width)
    grid = np.zeros((), dtype=np.int64)
    for i, idx in enumerate(per_axis):
        stride = math.prod(size[i + 1:])
        grid = np.add.outer(grid, idx * stride)
    nd = len(size)
    # grid axes: (o0, w0, o1, w1, ...) -> (o0, o1, ..., w0, w1, ...)
    perm = tuple(2 * i for i in range(nd)) + tuple(2 * i + 1 for i in range(nd))
    grid = grid.transpose(perm).reshape(tuple(out) + (-1,))
    return grid.reshape(-1), grid


def adaptive_max_pool(input: Tensor, output_size: Any, return_indices: bool,  # noqa: A002
                      nd: int, op: str) -> Any:
    """N-d max pooling to a fixed output size (torch's bins, even or not): a gather of
    each bin and a maximum over it (autograd routes the gradient through both)."""
    unbatched = check_rank(input, nd, op)
    size = spatial(input.shape, nd)
    out = output_size_arg(output_size, size, op)
    if all(o > 0 and n % o == 0 for n, o in zip(size, out)):
        k = tuple(n // o for n, o in zip(size, out))
        return max_pool(input, k, k, 0, 1, False, return_indices, nd, op)
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[:2]
    if math.prod(out) == 0:
        y = zeros((n, c) + out, dtype=x.dtype, device=x.device)
        res = (y, zeros((n, c) + out, dtype=_dt.int64, device=x.device))
    else:
        key = ("adaptmax", size, out)
        flat = INDEX_CACHE.get(key, x.device, lambda: _adaptive_gather_index(size, out)[0])
        grid = INDEX_CACHE.get(key + ("grid",), x.device,
                               lambda: _adaptive_gather_index(size, out)[1])
        vals = x.reshape(n, c, -1).index_select(2, flat).reshape((n, c) + out + (-1,))
        y, slot = vals.max(-1)
        with no_grad_ctx():
            idx = grid.expand((n, c) + tuple(grid.shape)).gather(-1, slot.unsqueeze(-1))
        res = (y, idx.squeeze(-1))
    if unbatched:
        res = (res[0].squeeze(0), res[1].squeeze(0))
    return res if return_indices else res[0]


def adaptive_max_pool1d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, L)``."""
    return adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, H, W)``."""
    return adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, D, H, W)``."""
    return adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


# ---------------------------------------------------------------------- unpool
def max_unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
               padding: Any, output_size: Any, nd: int, op: str) -> Tensor:
    """Scatter each value to its ``indices`` position in a zero tensor (the inverse of
    max pooling with ``return_indices``)."""
    from ._windows import expand
    unbatched = check_rank(input, nd, op)
    if tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{op}: expected indices of shape {list(input.shape)}, got "
                         f"{list(indices.shape)}")
    k = expand(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else expand(stride, nd, "stride", op)
    p = expand(padding, nd, "padding", op)
    size = spatial(input.shape, nd)
    default = tuple((n - 1) * ss - 2 * pp + kk for n, ss, pp, kk in zip(size, s, p, k))
    if output_size is None:
        out = default
    else:
        out = tuple(output_size)[-nd:]
        if len(out) != nd or any(not (dd - ss < o < dd + ss)
                                 for o, dd, ss in zip(out, default, s)):
            raise ValueError(f"{op}: invalid output_size {tuple(output_size)} (expected "
                             f"about {default})")
    x = input.unsqueeze(0) if unbatched else input
    idx = indices.unsqueeze(0) if unbatched else indices
    n, c = x.shape[:2]
    base = zeros((n, c, math.prod(out)), dtype=x.dtype, device=x.device)
    y = base.scatter(2, idx.reshape(n, c, -1), x.reshape(n, c, -1)).reshape((n, c) + out)
    return y.squeeze(0) if unbatched else y


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """Inverse of :func:`max_pool1d` (non-maxima set to zero)."""
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                      "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """Inverse of :func:`max_pool2d`."""
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                      "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """Inverse of :func:`max_pool3d`."""
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 3,
                      "max_unpool3d")


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool3d(input, output_size, True)
