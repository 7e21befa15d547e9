"""Reductions: sum, prod, mean, max/min, arg*, var/std, any/all, logsumexp, cumsum,
cumprod, norm.

Signatures accept both spellings: torch's ``dim``/``keepdim`` and the Array API's
``axis``/``keepdims``. Where the two disagree on the result (``max(x, 1)`` returns values and
indices in torch, an array in the standard; ``std``'s default correction) the rule is: a
positional or ``dim=`` axis means torch, ``axis=`` (or nothing) means the standard.
"""
from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

from .. import dtypes as _dt
from ..autocast_state import autocast_entry, autocast_operands, state as _autocast
from ..graph import needs_grad, no_grad_ctx, record
from ..layout_dispatch import dispatch as layout_dispatch, non_strided
from ..shape_util import no_none_dim, normalize_axes, normalize_axis, prod as _prod
from ..tensor import Tensor, _make
from .dtype_rules import floating
from .elementwise import _backend_failure, maximum, minimum
from .ternary import where
from .creation import zeros
from .gather import scatter
from .join import cat, pad_constant, stack
from .storage_dtypes import via_compute


class MaxMin(NamedTuple):
    """torch.return_types.max/min: ``values, indices``."""
    values: Tensor
    indices: Tensor


def _axes(x: Tensor, dim: Any, axis: Any) -> tuple[int, ...]:
    a = axis if axis is not None else dim
    if axis is None and isinstance(dim, (tuple, list)) and not dim:
        a = None  # torch: dim=() / dim=[] reduces every axis (the Array API's axis=() none)
    if x.ndim == 0:
        if a is not None:
            for v in (a if isinstance(a, (tuple, list)) else (a,)):
                normalize_axis(v, 0)
        return ()
    return normalize_axes(a, x.ndim)


def _expand_back(g: Tensor, shape: tuple, axes: tuple, keepdim: bool) -> Tensor:
    """Broadcast a reduced gradient back to the input shape."""
    if g.ndim == 0:
        return g.broadcast_to(shape)
    if not keepdim and axes:
        g = g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return g.broadcast_to(shape)


def _reduce(name: str, x: Tensor, axes: tuple, keep: bool, out_dtype: _dt.DType) -> Tensor:
    be = x._device.backend
    data = x._data
    cd = out_dtype.compute  # bfloat16 accumulates in float32 and rounds once (torch)
    try:
        if x._dtype is not cd:
            data = be.astype(data, cd.np)
        if not axes:
            data = be.copy(data) if data is x._data else data
        else:
            data = getattr(be, name)(data, axes, keep)
        if cd is not out_dtype:
            data = be.astype(data, out_dtype.np)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(name, x._device, e) from None
    return _make(data, x._device, out_dtype)


def _sum_dtype(d: _dt.DType) -> _dt.DType:
    if d.kind == "b" or d.kind == "i":
        return _dt.int64
    if d.kind == "u":
        return _dt.uint64
    return d


# ---------------------------------------------------------------------- sum / mean
def sum(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Sum over axes (all when None). Integer and bool inputs sum in int64 (uint64 for
    unsigned), as torch and the Array API do."""
    if non_strided(x):  # a sparse tensor (core/layout_dispatch.py)
        return layout_dispatch("sum", x, axis if dim is None else dim, keepdim or keepdims,
                               dtype=dtype)
    if _autocast.active and dtype is None:  # autocast: float32 on accelerators
        x, = autocast_operands("sum", x)
    axes = _axes(x, dim, axis)
    keep = keepdim or keepdims
    d = _dt.as_dtype(dtype) if dtype is not None else _sum_dtype(x._dtype)
    out = _reduce("sum", x, axes, keep, d)
    if needs_grad(x) and d.kind in "fc":
        record("SumBackward0" if len(axes) == x.ndim else "SumBackward1", _sum_backward, out, (x,),
               shape=x.shape, axes=axes, keep=keep)
    return out


def _sum_backward(node: Any, g: Tensor) -> tuple:
    return (_expand_back(g, node.shape, node.axes, node.keep),)


@via_compute
def mean(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Arithmetic mean; integer inputs give the default float dtype."""
    axes = _axes(x, dim, axis)
    d = _dt.as_dtype(dtype) if dtype is not None else x._dtype
    if d.kind not in "fc":
        d = _dt.get_default_dtype()
    n = _prod(x.shape[a] for a in axes)
    # dtype= explicit: mean is on no autocast list, its inner sum must not be cast up
    s = sum(x if x._dtype is d else x.to(d), axis=axes, keepdims=keepdim or keepdims, dtype=d)
    return s / n if n else s * math.nan


def nansum(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return sum(where(x.isnan(), 0, x), dim, keepdim, dtype=dtype)


def nanmean(x: Tensor, /, dim: Any = None, keepdim: bool = False) -> Tensor:
    keep = ~x.isnan()
    return nansum(x, dim, keepdim) / keep.sum(dim=dim, keepdim=keepdim)


# --------------------------------------------------------------------------- prod
def prod(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Product over axes (integers in int64)."""
    if _autocast.active and dtype is None:  # autocast: float32 on accelerators
        x, = autocast_operands("prod", x)
    axes = _axes(x, dim, axis)
    keep = keepdim or keepdims
    d = _dt.as_dtype(dtype) if dtype is not None else _sum_dtype(x._dtype)
    out = _reduce("prod", x, axes, keep, d)
    if needs_grad(x) and d.kind in "fc":
        record("ProdBackward1" if axes else "ProdBackward0", _prod_backward, out, (x,), (x,),
               axes=axes, keep=keep)
    return out


def _prod_backward(node: Any, g: Tensor) -> tuple:
    # product of all *other* elements, exact with zeros: exclusive cumprods from both sides
    (x,) = node.saved_tensors
    axes = node.axes
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = rest + list(axes)
    xp = x.permute(*perm) if perm != list(range(x.ndim)) else x
    lead = xp.shape[:len(rest)]
    flat = xp.reshape(lead + (-1,))
    ones = flat[..., :1] * 0 + 1
    left = cumprod(cat_([ones, flat[..., :-1]], -1), -1)
    right = cumprod(cat_([flat[..., 1:], ones], -1).flip(dims=(-1,)), -1).flip(dims=(-1,))
    others = (left * right).conj() if x.dtype.kind == "c" else left * right
    gx = others.reshape(xp.shape)
    inv = sorted(range(len(perm)), key=perm.__getitem__)
    gx = gx.permute(*inv) if perm != list(range(x.ndim)) else gx
    return (gx * _expand_back(g, x.shape, axes, node.keep),)


def cat_(ts: list, dim: int) -> Tensor:
    return cat(ts, dim)


# ----------------------------------------------------------------------- max / min
def _extreme(name: str, x: Tensor, axes: tuple, keep: bool) -> Tensor:
    if x.numel() == 0 and (not axes or builtins.any(x.shape[a] == 0 for a in axes)):
        raise ValueError(f"{name}(): cannot reduce an empty tensor (axis of size 0) because "
                         f"the operation has no identity")
    if x._dtype.kind == "c":
        raise _dt.DTypeError(f"{name}: complex numbers are not ordered")
    out = _reduce(name, x, axes, keep, x._dtype)
    if needs_grad(x):
        record("AmaxBackward0" if name == "max" else "AminBackward0", _extreme_backward, out,
               (x,), (x, out), axes=axes, keep=keep)
    return out


def _extreme_backward(node: Any, g: Tensor) -> tuple:
    # the gradient is shared evenly between tied extremes (torch's amax/amin)
    x, out = node.saved_tensors
    hit = x == _expand_back(out, x.shape, node.axes, node.keep)
    count = hit.sum(axis=node.axes, keepdims=True) if node.axes else hit.sum()
    return (where(hit, _expand_back(g, x.shape, node.axes, node.keep), 0) / count,)


def amax(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool = False) -> Tensor:
    """Maximum over axes (NaN propagates)."""
    return _extreme("max", x, _axes(x, dim, axis), keepdim or keepdims)


def amin(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool = False) -> Tensor:
    """Minimum over axes (NaN propagates)."""
    return _extreme("min", x, _axes(x, dim, axis), keepdim or keepdims)


def _with_indices(name: str, x: Tensor, dim: int, keep: bool) -> MaxMin:
    """torch's ``max(x, dim)``: values from the reduction, indices from arg-reduction
    (two primitives); the gradient goes to the selected index only (torch)."""
    d = normalize_axis(dim, x.ndim)
    if x.ndim == 0:
        return MaxMin(x.clone(), zeros((), dtype=_dt.int64, device=x.device))
    with no_grad_ctx():
        values = _extreme(name, x, (d,), keep)
    idx = (argmax if name == "max" else argmin)(x, axis=d, keepdims=keep)
    if needs_grad(x):
        record("MaxBackward0" if name == "max" else "MinBackward0", _select_backward, values,
               (x,), (idx,), dim=d, keep=keep, shape=x.shape)
    return MaxMin(values, idx)


def _select_backward(node: Any, g: Tensor) -> tuple:
    (idx,) = node.saved_tensors
    if not node.keep:
        g, idx = g.unsqueeze(node.dim), idx.unsqueeze(node.dim)
    return (scatter(zeros(node.shape, dtype=g.dtype, device=g.device), node.dim, idx, g),)


def max(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool = False) -> Any:
    """Array API ``max(x, axis=...)`` -> tensor; torch ``max(x, dim)`` -> (values,
    indices); torch ``max(a, b)`` -> elementwise maximum."""
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    if dim is not None and axis is None and not isinstance(dim, (tuple, list)):
        return _with_indices("max", x, dim, keepdim)
    return amax(x, dim, keepdim, axis=axis, keepdims=keepdims)


def min(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool = False) -> Any:
    """Array API ``min(x, axis=...)``; torch ``min(x, dim)`` -> (values, indices)."""
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    if dim is not None and axis is None and not isinstance(dim, (tuple, list)):
        return _with_indices("min", x, dim, keepdim)
    return amin(x, dim, keepdim, axis=axis, keepdims=keepdims)


def _arg(name: str, x: Tensor, dim: Any, keep: bool, axis: Any) -> Tensor:
    a = axis if axis is not None else dim
    if x._dtype.kind == "c":
        raise _dt.DTypeError(f"{name}: complex numbers are not ordered")
    if x.numel() == 0 and (a is None or x.shape[normalize_axis(a, x.ndim)] == 0):
        raise ValueError(f"{name}(): expected a non-empty tensor along the reduced axis")
    be = x._device.backend
    data = x._data
    if x._dtype is _dt.bool_:
        data = be.astype(data, _dt.uint8.np)
    elif x._dtype.compute is not x._dtype:  # bfloat16: compared as float32 (exact)
        data = be.astype(data, x._dtype.compute.np)
    ax = None if a is None else normalize_axis(a, x.ndim)  # 0-d: dims -1 and 0 only
    if x.ndim == 0:
        ax = None
    try:
        out = getattr(be, name)(data, ax, keep and ax is not None)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(name, x._device, e) from None
    if keep and ax is None and x.ndim:
        out = be.reshape(out, (1,) * x.ndim)
    return _make(out, x._device, _dt.int64)


def argmax(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
           keepdims: bool = False) -> Tensor:
    """Index of the first maximum (of the flattened tensor when no axis)."""
    return _arg("argmax", x, dim, keepdim or keepdims, axis)


def argmin(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
           keepdims: bool = False) -> Tensor:
    """Index of the first minimum."""
    return _arg("argmin", x, dim, keepdim or keepdims, axis)


def aminmax(x: Tensor, *, dim: Any = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return amin(x, dim, keepdim), amax(x, dim, keepdim)


# --------------------------------------------------------------------- any / all
def _logical(name: str, x: Tensor, dim: Any, keep: bool, axis: Any) -> Tensor:
    axes = _axes(x, dim, axis)
    xb = x if x._dtype is _dt.bool_ else (x != 0)
    return _reduce(name, xb, axes, keep, _dt.bool_)


def any(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool = False) -> Tensor:
    """True where any element along the axes is non-zero."""
    return _logical("any", x, dim, keepdim or keepdims, axis)


def all(x: Tensor, /, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool = False) -> Tensor:
    """True where every element along the axes is non-zero."""
    return _logical("all", x, dim, keepdim or keepdims, axis)


# -------------------------------------------------------------------- var / std
@via_compute
def var(x: Tensor, /, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        axis: Any = None, correction: Any = None, keepdims: bool = False) -> Tensor:
    """Variance. Array API default: ``correction=0``; torch (a positional/``dim=`` axis or
    ``unbiased=``): Bessel's correction 1. Pass ``correction=`` to be explicit."""
    torch_style = (dim is not None and axis is None) or unbiased is not None
    if isinstance(dim, bool) and unbiased is None:  # torch's var(x, unbiased)
        unbiased, dim = dim, None
        torch_style = True
    if correction is None:
        correction = (1 if unbiased is None or unbiased else 0) if torch_style else 0
    axes = _axes(x, dim, axis)
    keep = keepdim or keepdims
    xf = floating(x)
    n = _prod(xf.shape[a] for a in axes)
    mu = mean(xf, axis=axes, keepdims=True)
    d = xf - mu
    sq = (d * d.conj()).real if d._dtype.kind == "c" else d * d
    return sum(sq, axis=axes, keepdims=keep, dtype=sq.dtype) / builtins.max(n - correction, 0)


@via_compute
def std(x: Tensor, /, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        axis: Any = None, correction: Any = None, keepdims: bool = False) -> Tensor:
    """Standard deviation (same correction rule as :func:`var`)."""
    return var(x, dim, unbiased, keepdim, axis=axis, correction=correction,
               keepdims=keepdims).sqrt()


@via_compute
def var_mean(x: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    c = (1 if unbiased else 0) if correction is None else correction
    return var(x, dim, keepdim=keepdim, correction=c), mean(x, dim, keepdim)


@via_compute
def std_mean(x: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    c = (1 if unbiased else 0) if correction is None else correction
    return std(x, dim, keepdim=keepdim, correction=c), mean(x, dim, keepdim)


# -------------------------------------------------------------------- logsumexp
@autocast_entry("logsumexp")  # float32 on accelerators; outside via_compute: cast first
@via_compute
def logsumexp(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably (``dim`` is required, as
    torch: None is refused; ``()`` is every dim)."""
    axes = _axes(x, no_none_dim(dim, "logsumexp"), None)
    xf = floating(x)
    if not axes:
        return xf.clone()
    if 0 in [x.shape[a] for a in axes]:
        # an empty sum of exps is 0, its log -inf (torch); max has no identity to shift by
        return (xf.exp().sum(axis=axes, keepdims=keepdim)).log()
    with no_grad_ctx():
        m = amax(xf.detach(), axis=axes, keepdims=True)
        m = where(m.isinf(), 0, m)
    s = (xf - m).exp().sum(axis=axes, keepdims=True).log() + m
    return s if keepdim else s.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))


# --------------------------------------------------------------- cumulative ops
def _cumulative(name: str, x: Tensor, dim: int, dtype: Any) -> Tensor:
    d = _dt.as_dtype(dtype) if dtype is not None else _sum_dtype(x._dtype)
    a = normalize_axis(dim, x.ndim)  # 0-d: dims -1 and 0 only (torch)
    if x.ndim == 0:
        return x.to(d).clone()
    be = x._device.backend
    cd = d.compute  # bfloat16 accumulates in float32, each output rounded once (torch)
    data = x._data if x._dtype is cd else be.astype(x._data, cd.np)
    try:
        res = getattr(be, name)(data, a)
        out = _make(res if cd is d else be.astype(res, d.np), x._device, d)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(name, x._device, e) from None
    if needs_grad(x) and d.kind in "fc":
        if name == "cumsum":
            record("CumsumBackward0", _cumsum_backward, out, (x,), axis=a)
        else:
            record("CumprodBackward0", _cumprod_backward, out, (x,), (x, out), axis=a)
    return out


def _cumsum_backward(node: Any, g: Tensor) -> tuple:
    a = node.axis
    return (cumsum(g.flip(dims=(a,)), a).flip(dims=(a,)),)


def _cumprod_backward(node: Any, g: Tensor) -> tuple:
    # sum_{j >= i} g_j * out_j / x_i ; inputs with exact zeros use the safe product
    x, out = node.saved_tensors
    a = node.axis
    with no_grad_ctx():
        has_zero = bool((x == 0).any().item())
    if not has_zero:
        rev = cumsum((g * out.conj()).flip(dims=(a,)), a).flip(dims=(a,))
        return (rev / x.conj(),)
    return (_cumprod_backward_with_zeros(x, g, a),)


def _cumprod_backward_with_zeros(x: Tensor, g: Tensor, a: int) -> Tensor:
    """O(n^2) in the axis length but exact when x has zeros (as torch's fallback)."""
    n = x.shape[a]
    cols = []
    for i in range(n):
        # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i
        left = x.narrow(a, 0, i).prod(dim=a, keepdim=True) if i else None
        total = None
        run = None
        for j in range(i, n):
            if j > i:
                xj = x.narrow(a, j, 1)
                run = xj if run is None else run * xj
            term = g.narrow(a, j, 1)
            if left is not None:
                term = term * left
            if run is not None:
                term = term * run
            total = term if total is None else total + term
        assert total is not None  # the inner loop runs at least once (j = i)
        cols.append(total.squeeze(a))
    return stack(cols, a)


def cumsum(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive cumulative sum along ``dim`` (integers in int64)."""
    if _autocast.active and dtype is None:  # autocast: float32 on accelerators
        x, = autocast_operands("cumsum", x)
    return _cumulative("cumsum", x, dim, dtype)


def cumprod(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive cumulative product along ``dim``."""
    if _autocast.active and dtype is None:  # autocast: float32 on accelerators
        x, = autocast_operands("cumprod", x)
    return _cumulative("cumprod", x, dim, dtype)


def _array_api_cumulative(name: str, x: Tensor, axis: Any, dtype: Any,
                          include_initial: bool) -> Tensor:
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis is required for arrays of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name}: needs at least one dimension")
    a = normalize_axis(axis, x.ndim)
    d = _dt.as_dtype(dtype) if dtype is not None else (
        x._dtype if x._dtype.kind in "fc" else _sum_dtype(x._dtype))
    out = _cumulative("cumsum" if name == "cumulative_sum" else "cumprod", x, a, d)
    if include_initial:
        widths = [(1 if i == a else 0, 0) for i in range(x.ndim)]
        out = pad_constant(out, widths, 0 if name == "cumulative_sum" else 1)
    return out


def cumulative_sum(x: Tensor, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Tensor:
    """Array API cumulative sum (optionally starting with 0)."""
    return _array_api_cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x: Tensor, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Tensor:
    """Array API cumulative product (optionally starting with 1)."""
    return _array_api_cumulative("cumulative_prod", x, axis, dtype, include_initial)


# --------------------------------------------------------------------------- norms
@autocast_entry("vector_norm")
@via_compute
def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """The p-norm over axes (all when None): ord 2 (default), 1, inf, -inf, 0, any p."""
    axes = _axes(x, dim, axis)
    keep = keepdim or keepdims
    if dtype is not None:
        x = x.to(dtype)
    if x._dtype.kind not in "fc":
        x = x.to(_dt.get_default_dtype())
    a = x.abs()
    if ord == 2:
        return _two_norm(x, a, axes, keep)
    if ord == 1:
        return a.sum(axis=axes, keepdims=keep)
    if ord == math.inf:
        return amax(a, axis=axes, keepdims=keep) if a.numel() else a.sum(axis=axes,
                                                                          keepdims=keep)
    if ord == -math.inf:
        return amin(a, axis=axes, keepdims=keep)
    if ord == 0:
        return (a != 0).to(a.dtype).sum(axis=axes, keepdims=keep)
    return _p_norm(x, a, float(ord), axes, keep)


def _p_norm(x: Tensor, a: Tensor, p: float, axes: tuple, keep: bool) -> Tensor:
    """``(sum |x|^p)^(1/p)`` for any other p, with torch's subgradients (below)."""
    with no_grad_ctx():
        out = sum(a ** p, axis=axes, keepdims=keep) ** (1.0 / p)
    if needs_grad(x):
        record("LinalgVectorNormBackward0", _p_norm_backward, out, (x,), (x, out),
               axes=axes, keep=keep, p=p)
    return out


def _p_norm_backward(node: Any, g: Tensor) -> tuple:
    """torch's norm_backward: ``sgn(x) |x|^(p-1) g / ||x||^(p-1)``; 0 where x is 0 for
    p < 1 (there |x|^(p-1) is infinite and ``||x||^(1-p)`` is 0), and where the norm is 0
    for p > 1 (the chain rule through ``s^(1/p)`` would read 0 * inf = nan)."""
    x, out = node.saved_tensors
    p = node.p
    n = _expand_back(out, x.shape, node.axes, node.keep)
    gx = _expand_back(g, x.shape, node.axes, node.keep)
    a = x.abs()
    if p < 1:
        scaled = where(x == 0, 0, x.sgn() * a ** (p - 1))
        return (scaled * (gx * n ** (1 - p)),)
    scaled = x.sgn() * a ** (p - 1)
    return (where(n == 0, 0, scaled * (gx / where(n == 0, 1, n) ** (p - 1))),)


def _two_norm(x: Tensor, a: Tensor, axes: tuple, keep: bool) -> Tensor:
    with no_grad_ctx():
        sq = a * a
        out = sum(sq, axis=axes, keepdims=keep).sqrt()
    if needs_grad(x):
        record("LinalgVectorNormBackward0", _two_norm_backward, out, (x,), (x, out),
               axes=axes, keep=keep)
    return out


def _two_norm_backward(node: Any, g: Tensor) -> tuple:
    # x / ||x||, and 0 (a subgradient) where the norm is 0, as torch
    x, out = node.saved_tensors
    n = _expand_back(out, x.shape, node.axes, node.keep)
    scale = _expand_back(g, x.shape, node.axes, node.keep) / where(n == 0, 1, n)
    return (where(n == 0, 0, x * scale),)
