"""Sorting and set ops: sort, argsort, topk, kthvalue, median, unique, searchsorted.

Sorted values are ``gather(x, argsort(x))`` when a gradient is needed, so their backward is
gather's; otherwise the backend's sort is used directly.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ...errors import ShapeError
from .. import dtypes as _dt
from ..device import same_device
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import normalize_axis
from ..tensor import Tensor, _make
from .elementwise import _backend_failure, minimum
from .creation import arange, tensor, zeros
from .gather import gather, nonzero, scatter, take
from .join import cat
from .reduction import argmax
from .ternary import where


class ValuesIndices(NamedTuple):
    """torch.return_types.sort/topk/kthvalue/median/mode: ``values, indices``."""
    values: Tensor
    indices: Tensor


def _check_orderable(op: str, x: Tensor) -> None:
    if x._dtype.kind == "c":
        raise _dt.DTypeError(f"{op}: complex numbers are not ordered")


def argsort(x: Tensor, /, dim: int = -1, descending: bool = False, stable: bool = True, *,
            axis: Any = None) -> Tensor:
    """int64 indices that sort ``x`` along an axis (NaN last ascending, first
    descending); stable by default (the Array API's default; torch's is unstable, and a
    stable order is one of its valid orders)."""
    _check_orderable("argsort", x)
    a = normalize_axis(dim if axis is None else axis, x.ndim)  # 0-d: dims -1 and 0 only
    if x.ndim == 0:
        return zeros((), dtype=_dt.int64, device=x.device)
    be = x._device.backend
    data = x._data if x._dtype is not _dt.bool_ else be.astype(x._data, _dt.uint8.np)
    if x._dtype.compute is not x._dtype:  # bfloat16: ordered as float32 (exact)
        data = be.astype(data, x._dtype.compute.np)
    try:
        out = be.argsort(data, a, bool(descending), bool(stable))
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("argsort", x._device, e) from None
    return _make(out, x._device, _dt.int64)


def _sorted_values(x: Tensor, a: int, descending: bool, stable: bool) -> tuple[Tensor, Tensor]:
    idx = argsort(x, a, descending, stable)
    return gather(x, a, idx), idx


def sort_array_api(x: Tensor, /, *, axis: int = -1, descending: bool = False,
                   stable: bool = True) -> Tensor:
    """Array API ``sort``: the sorted tensor."""
    _check_orderable("sort", x)
    a = normalize_axis(axis, x.ndim)
    if x.ndim == 0:
        return x.clone()
    if needs_grad(x):
        return _sorted_values(x, a, descending, stable)[0]
    be = x._device.backend
    try:
        data = be.sort(x._data, a, bool(descending), bool(stable))
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("sort", x._device, e) from None
    return _make(data, x._device, x._dtype)


def sort_torch(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
               ) -> ValuesIndices:
    """torch's ``sort``: ``(values, indices)``."""
    _check_orderable("sort", x)
    a = normalize_axis(dim, x.ndim)
    if x.ndim == 0:
        return ValuesIndices(x.clone(), zeros((), dtype=_dt.int64, device=x.device))
    v, i = _sorted_values(x, a, descending, True)
    return ValuesIndices(v, i)


def sort(x: Tensor, /, dim: Any = None, descending: bool = False, stable: Any = None, *,
         axis: Any = None) -> Any:
    """``sort(x, axis=...)`` follows the Array API (returns the sorted tensor);
    ``sort(x, dim)`` / ``sort(x, dim=...)`` follows torch (returns values and indices)."""
    if dim is not None and axis is None:
        return sort_torch(x, dim, descending, bool(stable))
    return sort_array_api(x, axis=-1 if axis is None else axis, descending=descending,
                          stable=True if stable is None else stable)


def msort(x: Tensor) -> Tensor:
    return sort_torch(x, 0).values


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    _check_orderable("topk", x)
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a] if x.ndim else 1
    if not 0 <= k <= n:
        raise ShapeError(f"topk: k ({k}) is out of range for dimension {a} of size {n}")
    if x.ndim == 0:
        return sort_torch(x)
    idx = argsort(x, a, descending=largest, stable=True).narrow(a, 0, k)
    return ValuesIndices(gather(x, a, idx), idx)


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The k-th smallest value (1-based) along ``dim`` and its index."""
    if x.ndim == 0:
        return _of_scalar(lambda t: kthvalue(t, k, normalize_axis(dim, 0) * 0), x)
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a] if x.ndim else 1
    if not 1 <= k <= n:
        raise ShapeError(f"kthvalue: k ({k}) is out of range for dimension of size {n}")
    v, i = sort_torch(x, a)
    v, i = v.narrow(a, k - 1, 1), i.narrow(a, k - 1, 1)
    if not keepdim:
        v, i = v.squeeze(a), i.squeeze(a)
    return ValuesIndices(v, i)


_UNSET: Any = object()


def _of_scalar(fn: Any, x: Tensor) -> ValuesIndices:
    """A (values, indices) reduction of a 0-d tensor: of its one element as 1-D, with 0-d
    results (torch)."""
    v, i = fn(x.reshape(1))
    return ValuesIndices(v.reshape(()), i.reshape(()))


def median(x: Tensor, dim: Any = _UNSET, keepdim: bool = False, *, axis: Any = _UNSET,
           keepdims: Any = _UNSET) -> Any:
    """The median, by the README's one rule for names the two APIs share.

    ``axis=``/``keepdims=`` (NumPy's and the array libraries' spelling, which scikit-learn
    calls) give NumPy's median: the mean of the two middle values, a tensor, ``axis`` an
    int, a tuple or None. ``dim=`` (or positional) and no argument give torch's: the lower
    middle value, and with ``dim`` the ``(values, indices)`` pair. Both propagate NaN
    (torch's index is then the first NaN's); ``nanmedian`` skips NaN."""
    if axis is not _UNSET or keepdims is not _UNSET:
        if dim is not _UNSET:
            raise TypeError("median: pass dim= (torch) or axis= (NumPy), not both")
        return _median_numpy(x, None if axis is _UNSET else axis,
                             False if keepdims is _UNSET else bool(keepdims))
    _check_orderable("median", x)
    if dim is _UNSET or dim is None:
        flat = x.reshape(-1)
        if flat.shape[0] == 0:
            raise ShapeError("median() of an empty tensor has no value (torch raises too); "
                             "pass dim= over a non-empty axis")
        with no_grad_ctx():
            value = kthvalue(flat, (flat.shape[0] + 1) // 2, 0).values
            if flat._dtype.kind == "f":
                value = where(flat.isnan().any(), flat.new_full((), float("nan")), value)
        if needs_grad(x):  # torch: the gradient is shared evenly by every tie
            record("MedianBackward0", _even_backward, value, (x,), (x, value))
        return value
    if x.ndim == 0:
        return _of_scalar(lambda t: median(t, normalize_axis(dim, 0) * 0), x)
    a = normalize_axis(dim, x.ndim)
    out = kthvalue(x, (x.shape[a] + 1) // 2, a, keepdim)
    if x._dtype.kind != "f" or x.shape[a] == 0:
        return out
    return _nan_first(x, a, keepdim, out)


def _nan_first(x: Tensor, a: int, keepdim: bool, out: ValuesIndices) -> ValuesIndices:
    """torch's NaN rule for ``median(dim)``: a slice holding NaN gives NaN, at the index
    of its first NaN. The values keep kthvalue's gradient where no NaN is present."""
    with no_grad_ctx():
        isnan = x.isnan()
        has_nan = isnan.any(dim=a, keepdim=keepdim)
        first = argmax(isnan.to(_dt.uint8), dim=a, keepdim=keepdim)
        indices = where(has_nan, first, out.indices)
    values = where(has_nan, out.values.new_full((), float("nan")), out.values)
    return ValuesIndices(values, indices)


def _median_numpy(x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """NumPy's median over ``axis`` (None: every axis): the mean of the two middles,
    NaN where a slice holds NaN (NaN sorts last, so the last sorted value tells)."""
    _check_orderable("median", x)
    if x._dtype.kind != "f":
        x = x.to(_dt.get_default_dtype())
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else (
        tuple(normalize_axis(a, nd) for a in axis) if isinstance(axis, (tuple, list))
        else (normalize_axis(axis, nd),))
    if len(set(axes)) != len(axes):
        raise ValueError(f"median: repeated axis in {axis!r}")
    if nd == 0:
        return x.clone()
    rest = [d for d in range(nd) if d not in axes]
    moved = x.permute(*rest, *axes) if axes else x
    n = 1
    for d in axes:
        n *= x.shape[d]
    if n == 0:
        raise ShapeError(f"median over axis {axis!r} of a tensor of shape {tuple(x.shape)}: "
                         "the reduced axes are empty")
    flat = moved.reshape(*[x.shape[d] for d in rest], n)
    v = sort_torch(flat, -1).values
    lo, hi = v.narrow(-1, (n - 1) // 2, 1), v.narrow(-1, n // 2, 1)
    med = (lo + hi) / 2
    med = where(v.narrow(-1, n - 1, 1).isnan(), v.narrow(-1, n - 1, 1), med).squeeze(-1)
    if keepdims:
        shape = list(x.shape)
        for d in axes:
            shape[d] = 1
        med = med.reshape(*shape)
    return med


def nanmedian(x: Tensor, dim: Any = _UNSET, keepdim: bool = False) -> Any:
    """torch's nanmedian: the lower middle of the non-NaN values (NaN only where a slice
    is all NaN); with ``dim``, ``(values, indices)``."""
    _check_orderable("nanmedian", x)
    full = dim is _UNSET or dim is None
    if x.ndim == 0 and not full:
        return _of_scalar(lambda t: nanmedian(t, normalize_axis(dim, 0) * 0), x)
    t = x.reshape(-1) if full else x
    a = 0 if full else normalize_axis(dim, x.ndim)
    if x._dtype.kind != "f":
        return median(t, a, keepdim).values if full else median(t, a, keepdim)
    sorted_v, idx = sort_torch(t, a)  # NaN last
    with no_grad_ctx():
        count = (~t.isnan()).sum(dim=a, keepdim=True)
        k = where(count > 0, (count - 1) // 2, count * 0)
        pick = gather(idx, a, k)
    values = gather(sorted_v, a, k)
    values = where(count == 0, values.new_full((), float("nan")), values)
    if full:
        return values.reshape(())
    if not keepdim:
        values, pick = values.squeeze(a), pick.squeeze(a)
    return ValuesIndices(values, pick)


def _even_backward(node: Any, g: Tensor) -> tuple:
    """The gradient of a full reduction that picks one value: split evenly among the
    elements equal to it (torch's ``evenly_distribute_backward``)."""
    x, value = node.saved_tensors
    hit = (x == value).to(g.dtype)
    return (hit * (g / hit.sum()),)


_QUANTILE_MODES = ("linear", "lower", "higher", "nearest", "midpoint")


def _q_tensor(q: Any, like: Tensor) -> Tensor:
    """``q`` as a 0-d or 1-D tensor of ``like``'s dtype, each value checked in [0, 1]."""
    qt = q if isinstance(q, Tensor) else tensor(q, dtype=like.dtype, device=like.device)
    if qt.ndim > 1:
        raise ShapeError(f"quantile() q must be a scalar or 1D tensor, got {qt.ndim}-D")
    if qt.dtype is not like.dtype:
        raise _dt.DTypeError(f"quantile() q tensor must be same dtype as the input tensor, "
                             f"got {qt.dtype.name} and {like.dtype.name}")
    if qt.device != like.device:
        qt = qt.to(like.device)
    with no_grad_ctx():
        if qt.numel() and not bool(((qt >= 0) & (qt <= 1)).all().item()):
            raise ValueError("quantile() q values must be in the range [0, 1]")
    return qt


def quantile_of_sorted(v: Tensor, a: int, count: Tensor, q: Any,
                       interpolation: str) -> Tensor:
    """Quantiles ``q`` of the first ``count`` values (kept-dim shape) of ``v``, sorted
    along ``a``: the result has ``v``'s shape with axis ``a`` of size 1, after a leading
    axis for a 1-D ``q``; NaN where ``count`` is 0. Ranks ``q * (count - 1)`` between two
    order statistics are interpolated as ``interpolation`` says (torch's lerp)."""
    if interpolation not in _QUANTILE_MODES:
        raise ValueError(f"quantile() interpolation must be one of "
                         f"{', '.join(_QUANTILE_MODES)}, got {interpolation!r}")
    if v.dtype.kind != "f":
        raise _dt.DTypeError(f"quantile() input tensor must be either float or double "
                             f"dtype, got {v.dtype.name}")
    qt = _q_tensor(q, v)
    lead = tuple(qt.shape)
    qv = qt.reshape(lead + (1,) * v.ndim)
    with no_grad_ctx():
        last = (count - 1).clamp(min=0).to(v.dtype)
        rank = qv * last
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()  # half to even, as torch rounds
        below = rank.floor()
        above = minimum(below + 1, last)
        weight = (rank - below) if interpolation != "midpoint" else \
            where(rank > below, 0.5, 0.0).to(v.dtype)
        full = lead + tuple(1 if k == a else n for k, n in enumerate(v.shape))
        i_lo = below.to(_dt.int64).broadcast_to(full)
        i_hi = above.to(_dt.int64).broadcast_to(full)
    src = v.broadcast_to(lead + tuple(v.shape)) if lead else v
    ax = a + len(lead)
    lo, hi = gather(src, ax, i_lo), gather(src, ax, i_hi)
    # torch's lerp: exact at both ends
    out = where(weight < 0.5, lo + weight * (hi - lo), hi - (hi - lo) * (1 - weight))
    return where(count == 0, float("nan"), out)


def quantile(x: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Tensor:
    """torch's quantile: ``interpolation`` between the two order statistics around
    ``q * (n - 1)``: 'linear' (default), 'lower', 'higher', 'nearest' (half to even, as
    torch rounds) or 'midpoint'; NaN where a slice holds a NaN."""
    flat = x.reshape(-1) if dim is None or x.ndim == 0 else x
    a = 0 if dim is None else normalize_axis(dim, max(x.ndim, 1))
    if flat.ndim == 0:
        flat = flat.reshape(1)
    n = flat.shape[a]
    if n == 0:
        raise ShapeError("quantile() input tensor must be non-empty")
    count = zeros(tuple(1 if k == a else m for k, m in enumerate(flat.shape)),
                  dtype=_dt.int64, device=x.device) + n
    res = quantile_of_sorted(sort_torch(flat, a).values, a, count, q, interpolation)
    if flat.dtype.kind == "f":
        with no_grad_ctx():
            has_nan = (flat != flat).any(dim=a, keepdim=True)
        res = where(has_nan, float("nan"), res)
    return finish_quantile(res, x, q, dim, a, keepdim)


def finish_quantile(res: Tensor, x: Tensor, q: Any, dim: Any, a: int,
                    keepdim: bool) -> Tensor:
    """The output shape of torch's quantile from :func:`quantile_of_sorted`'s."""
    scalar_q = not isinstance(q, (Tensor, list, tuple)) or \
        (isinstance(q, Tensor) and q.ndim == 0)
    lead = () if scalar_q else (res.shape[0],)
    if dim is None:
        return res.reshape(lead + ((1,) * x.ndim if keepdim else ()))
    if keepdim:
        return res.reshape(lead + tuple(1 if k == a else n for k, n in enumerate(x.shape)))
    return res.reshape(lead + tuple(n for k, n in enumerate(x.shape) if k != a))


# --------------------------------------------------------------------- searchsorted
def searchsorted(x1: Tensor, x2: Any, /, *, side: str = "left", sorter: Tensor | None = None,
                 right: bool | None = None, out_int32: bool = False) -> Tensor:
    """Insertion points of ``x2`` into the sorted last axis of ``x1`` (``side='right'``
    or torch's ``right=True`` for the upper bound)."""
    if right is not None:
        side = "right" if right else "left"
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if not isinstance(x2, Tensor):
        x2 = tensor(x2, device=x1.device)
    same_device("searchsorted", x1, x2, *([sorter] if sorter is not None else []))
    if sorter is not None:
        x1 = take(x1, sorter) if x1.ndim == 1 else gather(x1, -1, sorter)
    if x1.ndim > 1 and x1.shape[:-1] != x2.shape[:-1]:
        raise ShapeError(f"searchsorted: leading dims of the sorted sequence {x1.shape[:-1]} "
                         f"and the values {x2.shape[:-1]} must match")
    d = _dt.promote_types(x1._dtype, x2._dtype).compute  # bfloat16: as float32 (exact)
    a = x1 if x1._dtype is d else x1.to(d)
    b = x2 if x2._dtype is d else x2.to(d)
    be = x1._device.backend
    scalar = b.ndim == 0
    bd = be.reshape(b._data, (1,)) if scalar else b._data
    try:
        out = be.searchsorted(a._data, bd, side)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("searchsorted", x1._device, e) from None
    if scalar:
        out = be.reshape(out, ())
    t = _make(out, x1._device, _dt.int64)
    return t.to(_dt.int32) if out_int32 else t


def bucketize(x: Tensor, boundaries: Tensor, *, right: bool = False,
              out_int32: bool = False) -> Tensor:
    """torch's bucketize (searchsorted with the roles swapped)."""
    return searchsorted(boundaries, x, right=right, out_int32=out_int32)


# -------------------------------------------------------------------------- unique
class UniqueAll(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCounts(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverse(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique_core(x: Tensor) -> UniqueAll:
    """All unique-related results of the flattened tensor, computed on the device with one
    device-to-host sync (the number of unique values). NaNs are each unique."""
    with no_grad_ctx():
        flat = x.reshape(-1)
        n = flat.shape[0]
        if n == 0:
            e = zeros(0, dtype=_dt.int64, device=x.device)
            return UniqueAll(flat.clone(), e, e.reshape(x.shape), e)
        order = argsort(flat, 0, stable=True)
        sv = gather(flat, 0, order)
        first = cat([(sv[:1] == sv[:1]) | True, sv[1:] != sv[:-1]])
        starts = nonzero(first)[0]
        values = gather(sv, 0, starts)
        ends = cat([starts[1:], arange(n, n + 1, device=x.device)])
        counts = ends - starts
        group = first.to(_dt.int64).cumsum(0) - 1
        inverse = scatter(zeros(n, dtype=_dt.int64, device=x.device), 0, order, group)
        first_index = gather(order, 0, starts)
    return UniqueAll(values, first_index, inverse.reshape(x.shape), counts)


def _unique_slices(x: Tensor, dim: int) -> UniqueAll:
    """The distinct slices of ``x`` along ``dim`` in lexicographic order: the slices as
    rows, sorted by one stable sort per column (last column first), then runs of equal
    rows collapsed."""
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    moved = x.movedim(a, 0)
    with no_grad_ctx():
        rows = moved.reshape(n, -1)
        order = arange(n, device=x.device)
        for c in range(rows.shape[1] - 1, -1, -1):
            col = gather(rows[:, c], 0, order)
            order = gather(order, 0, argsort(col, 0, stable=True))
        srt = rows.index_select(0, order)
        if n:
            differs = (srt[1:] != srt[:-1]).any(dim=1) if rows.shape[1] else \
                zeros(n - 1, dtype=_dt.bool_, device=x.device)
            first = cat([(order[:1] == order[:1]), differs])
        else:
            first = zeros(0, dtype=_dt.bool_, device=x.device)
        starts = nonzero(first)[0]
        ends = cat([starts[1:], arange(n, n + 1, device=x.device)])
        group = first.to(_dt.int64).cumsum(0) - 1
        inverse = scatter(zeros(n, dtype=_dt.int64, device=x.device), 0, order, group)
        first_index = gather(order, 0, starts)
    values = moved.index_select(0, first_index).movedim(0, a)
    return UniqueAll(values, first_index, inverse, ends - starts)


def unique_values(x: Tensor, /) -> Tensor:
    return _unique_core(x).values


def unique_counts(x: Tensor, /) -> UniqueCounts:
    u = _unique_core(x)
    return UniqueCounts(u.values, u.counts)


def unique_inverse(x: Tensor, /) -> UniqueInverse:
    u = _unique_core(x)
    return UniqueInverse(u.values, u.inverse_indices)


def unique_all(x: Tensor, /) -> UniqueAll:
    return _unique_core(x)


def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """torch's unique: of the flattened tensor, or of the slices along ``dim`` (sorted
    lexicographically); with the inverse indices and counts on request."""
    u = _unique_core(x) if dim is None else _unique_slices(x, dim)
    out: list = [u.values]
    if return_inverse:
        out.append(u.inverse_indices)
    if return_counts:
        out.append(u.counts)
    return out[0] if len(out) == 1 else tuple(out)
