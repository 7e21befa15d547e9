"""Scatter with a reduction: torch's ``scatter_reduce`` (sum, prod, mean, amax, amin),
``index_reduce``, and ``scatter(..., reduce='add'|'multiply')``.

The backends offer one scatter primitive, which writes or sums (``scatter_nd``); the other
reductions are composed here once, for every backend: the elements bound for one target are
brought together by a stable sort of their target positions, reduced by a segmented scan
(log2(n) elementwise passes, each combining an element with the one 2**k places before it
when both belong to the same target) and the last element of each segment is written.
The backward follows torch's formulas (ties of amax/amin share the gradient equally; prod
handles zeros in ``src`` and ``input``), written with Tensor ops.
"""
from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import normalize_axis
from ..tensor import Tensor
from . import creation, join
from .elementwise import maximum, minimum
from .out_arg import write_out
from .gather import _check_gather, gather, scatter, scatter_add
from .sorting import argsort
from .ternary import where

__all__ = ["scatter_reduce", "index_reduce", "scatter_with_reduce"]

_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_COMBINE = {"prod": lambda a, b: a * b, "amax": maximum, "amin": minimum}


def _linear_targets(x: Tensor, d: int, index: Tensor) -> Tensor:
    """For each element of ``index`` (int64, in range), the flat position in ``x``'s
    C-ordered elements it targets: its own coordinates with axis ``d`` replaced by the
    index value."""
    strides = [1] * x.ndim
    for k in range(x.ndim - 2, -1, -1):
        strides[k] = strides[k + 1] * x.shape[k + 1]
    lin = index * strides[d]
    for k, n in enumerate(index.shape):
        if k != d and n > 1:
            view = [1] * index.ndim
            view[k] = n
            lin = lin + creation.arange(n, device=x.device).reshape(view) * strides[k]
    return lin.reshape(-1)


def _segment_last(t: Tensor, v: Tensor, combine: Any) -> tuple[Tensor, Tensor]:
    """The distinct targets of ``t`` and ``combine``-reduced ``v`` of each (inclusive
    segmented scan over the sorted order, then the last element of each segment)."""
    order = argsort(t, stable=True)
    t, v = t[order], v[order]
    n = t.shape[0]
    k = 1
    while k < n:
        same = t[k:] == t[:-k]
        v = join.cat([v[:k], where(same, combine(v[k:], v[:-k]), v[k:])], 0)
        k *= 2
    last = join.cat([t[1:] != t[:-1], creation.ones(1, dtype=_dt.bool_, device=t.device)], 0)
    return t[last], v[last]


def _forward(x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str,
             include_self: bool) -> Tensor:
    """The reduction itself (no graph): ``x``'s values with each target reduced."""
    flat = x.reshape(-1).clone()
    if index.numel() == 0:
        return flat.reshape(x.shape)
    lin = _linear_targets(x, d, index)
    vals = src[tuple(slice(0, n) for n in index.shape)].reshape(-1)
    if vals.dtype is not x.dtype:
        vals = vals.to(x.dtype)
    if reduce in ("sum", "mean"):
        base = flat if include_self else scatter(flat, 0, lin, 0)
        total = scatter_add(base, 0, lin, vals)
        if reduce == "sum":
            return total.reshape(x.shape)
        ones = creation.ones(lin.shape, dtype=x.dtype, device=x.device)
        start = creation.ones_like(flat) if include_self else \
            scatter(creation.ones_like(flat), 0, lin, 0)
        count = scatter_add(start, 0, lin, ones)
        count = where(count == 0, 1, count).to(x.dtype)
        mean = total / count if x.dtype.kind in "fc" else \
            total.div(count, rounding_mode="floor")
        return mean.to(x.dtype).reshape(x.shape)
    combine = _COMBINE[reduce]
    targets, reduced = _segment_last(lin, vals, combine)
    if include_self:
        reduced = combine(flat[targets], reduced)
    return scatter(flat, 0, targets, reduced.to(x.dtype)).reshape(x.shape)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor,  # noqa: A002
                   reduce: str, *, include_self: bool = True, out: Any = None) -> Tensor:
    """Out of place: ``out[index[i][j]][j] = reduce(out[...], src[i][j])`` along ``dim``
    (shown for dim 0) with ``reduce`` one of sum, prod, mean, amax, amin; with
    ``include_self=False`` the targets start from nothing instead of ``input``'s values."""
    if reduce not in _REDUCES:
        raise ValueError(f"scatter_reduce: reduce must be one of {', '.join(_REDUCES)}, "
                         f"got {reduce!r}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    if src.dtype is not input.dtype:
        raise _dt.DTypeError(f"scatter_reduce: expected src of input's dtype "
                             f"{input.dtype.name}, got {src.dtype.name}")
    if input.ndim == 0 and isinstance(index, Tensor) and index.ndim <= 1:
        normalize_axis(dim, 1)  # torch: a 0-d input is one element along dim 0
        res = scatter_reduce(input.reshape(1), 0, index.reshape(-1), src.reshape(-1), reduce,
                             include_self=include_self).reshape(())
        return write_out("scatter_reduce", res, out)
    d, idx = _check_gather("scatter_reduce", input, dim, index)
    for k, (a, b) in enumerate(zip(index.shape, src.shape)):
        if a > b:
            raise ShapeError(f"scatter_reduce: index {tuple(index.shape)} is larger than "
                             f"src {tuple(src.shape)} at dimension {k}")
    with no_grad_ctx():
        res = _forward(input, d, idx, src, reduce, include_self)
    if needs_grad(input, src):
        record("ScatterReduceBackward0", _backward, res, (input, src),
               (input, src, idx, res), dim=d, reduce=reduce, include_self=include_self)
    return write_out("scatter_reduce", res, out)


def _crop(src: Tensor, index: Tensor) -> Tensor:
    return src[tuple(slice(0, n) for n in index.shape)]


def _pad_to(g: Tensor, shape: tuple) -> Tensor:
    if tuple(g.shape) == tuple(shape):
        return g
    return join.pad_constant(g, [(0, s - n) for s, n in zip(shape, g.shape)])


def _backward(node: Any, g: Tensor) -> tuple:
    x, src_full, index, out = node.saved_tensors
    d, reduce, incl = node.dim, node.reduce, node.include_self
    src = _crop(src_full, index)
    if reduce == "sum":
        gx, gs = g, gather(g, d, index)
    elif reduce == "mean":
        ones = creation.ones_like(src)
        start = creation.ones_like(g) if incl else scatter(creation.ones_like(g), d, index, 0)
        count = scatter_add(start, d, index, ones)
        count = where(count == 0, 1, count)
        gx, gs = g / count, gather(g / count, d, index)
    elif reduce in ("amax", "amin"):
        value = gather(out, d, index)
        self_is = (x == out).to(g.dtype)
        if not incl:
            self_is = scatter(self_is, d, index, 0)
        src_is = (src == value).to(g.dtype)
        share = g / scatter_add(self_is, d, index, src_is)
        gx, gs = self_is * share, src_is * gather(share, d, index)
    else:
        gx, gs = _prod_grads(g, x, src, index, out, d, incl)
    if not incl:
        gx = scatter(gx, d, index, 0)
    return gx, _pad_to(gs, tuple(src_full.shape))


def _prod_grads(g: Tensor, x: Tensor, src: Tensor, index: Tensor, out: Tensor, d: int,
                incl: bool) -> tuple[Tensor, Tensor]:
    """torch's prod gradients: a zero in ``x`` or a single zero among a target's ``src``
    values gets the product of the others; two or more zeros give 0."""
    masked_x = where(x == 0, 1, x)
    gx = g * scatter_reduce(masked_x, d, index, src, "prod", include_self=incl) / masked_x
    src_zero = src == 0
    zeros_at = scatter_add(creation.zeros_like(g), d, index, src_zero.to(g.dtype))
    single = src_zero & (gather(zeros_at, d, index) == 1)
    others = scatter_reduce(x, d, index, where(single, 1, src), "prod", include_self=incl)
    gs = where(single, gather(g * others, d, index),
               gather(g * out, d, index) / where(src_zero, 1, src))
    return gx, gs


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor,  # noqa: A002
                 reduce: str, *, include_self: bool = True, out: Any = None) -> Tensor:
    """``out[..., index[i], ...] = reduce(out[..., index[i], ...], source[..., i, ...])``
    along ``dim`` for the 1-D ``index``; ``reduce`` one of prod, mean, amax, amin."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"index_reduce: reduce must be one of prod, mean, amax, amin, got "
                         f"{reduce!r}")
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.kind not in "iu":
        raise IndexError("index_reduce: index must be a 0-D or 1-D integer tensor")
    idx = index.reshape(-1)
    d = normalize_axis(dim, max(input.ndim, 1))
    x, s = (input.reshape(1), source.reshape(1)) if input.ndim == 0 else (input, source)
    if s.ndim != x.ndim or s.shape[d] != idx.shape[0]:
        raise ShapeError(f"index_reduce: source {tuple(source.shape)} must match input "
                         f"{tuple(input.shape)} but for dimension {dim} of size "
                         f"{idx.shape[0]} (the index's length)")
    view = [1] * s.ndim
    view[d] = idx.shape[0]
    full = idx.reshape(view).expand(*s.shape)
    res = scatter_reduce(x, d, full, s, reduce, include_self=include_self)
    return write_out("index_reduce", res.reshape(input.shape), out)


def scatter_with_reduce(x: Tensor, dim: int, index: Tensor, src: Any, reduce: str) -> Tensor:
    """torch's ``scatter(..., reduce='add'|'multiply')`` (``src`` a tensor or a scalar)."""
    if reduce not in ("add", "multiply"):
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    if not isinstance(src, Tensor):
        src = creation.full(tuple(index.shape), src, dtype=x.dtype, device=x.device)
    return scatter_reduce(x, dim, index, src, "sum" if reduce == "add" else "prod")


def bind(T: Any) -> None:
    """Tensor methods: ``x.scatter_reduce(...)``, ``x.index_reduce(...)`` and in place."""
    from .inplace import inplace_method
    T.scatter_reduce, T.index_reduce = scatter_reduce, index_reduce
    T.scatter_reduce_ = inplace_method(scatter_reduce, "scatter_reduce")
    T.index_reduce_ = inplace_method(index_reduce, "index_reduce")
