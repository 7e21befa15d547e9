"""torch's counting and index helpers: ``histogram``/``histogramdd``, ``mode``,
``unique_consecutive``, ``nanquantile``, ``unravel_index``, ``combinations``,
``nonzero_static`` and ``broadcast_shapes``.

Composites of sorting, searching and scatter-add, so they run on every backend; values that
are selected (``mode``, ``nanquantile``) are gathered from the input, so they carry its
gradient.
"""
from __future__ import annotations

import builtins  # ``range`` is a keyword argument of torch's histograms
import itertools
from typing import Any, NamedTuple, Sequence

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..shape_util import Size, broadcast_shapes as _broadcast_shapes, normalize_axis, prod
from ..tensor import Tensor
from . import creation, join
from .elementwise import maximum
from .gather import gather, nonzero_torch, scatter_add
from .numeric_extras import running_scan
from .out_arg import write_out
from .sorting import (ValuesIndices, finish_quantile, quantile_of_sorted, searchsorted,
                      sort_torch)
from .ternary import where

__all__ = ["histogram", "histogramdd", "mode", "unique_consecutive", "nanquantile",
           "unravel_index", "combinations", "nonzero_static", "broadcast_shapes"]


class Histogram(NamedTuple):
    """torch.return_types.histogram: ``hist, bin_edges``."""
    hist: Tensor
    bin_edges: Tensor


class HistogramDD(NamedTuple):
    """torch.return_types.histogramdd: ``hist, bin_edges`` (one edges tensor per dim)."""
    hist: Tensor
    bin_edges: list


# ------------------------------------------------------------------- histograms
def _edges(column: Tensor, bins: Any, rng: Any) -> Tensor:
    """The bin edges of one dimension: given, or ``bins`` equal bins over ``rng`` (the
    data's extent when None; an empty extent widened by 0.5 each way, as torch)."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise ValueError("histogram: bins must be a 1-D tensor of at least one edge")
        return bins.to(column.dtype)
    if int(bins) < 1:
        raise ValueError(f"histogram: bins must be > 0, but got {bins}")
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
        if lo > hi:
            raise ValueError(f"histogram: max must be larger than min, got range {rng}")
    elif column.shape[0]:
        lo, hi = float(column.min().item()), float(column.max().item())
    else:
        lo, hi = 0.0, 0.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return creation.linspace(lo, hi, int(bins) + 1, dtype=column.dtype, device=column.device)


def _bin_of(column: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """Each value's bin (the last bin includes the right edge) and whether it is inside."""
    nb = edges.shape[0] - 1
    inside = (column >= edges[0]) & (column <= edges[-1])
    idx = (searchsorted(edges, column, right=True) - 1).clamp(0, max(nb - 1, 0))
    return idx, inside


def _check_float(op: str, x: Tensor, weight: Tensor | None) -> None:
    if x.dtype.kind != "f":
        raise _dt.DTypeError(f"torch.{op}: input tensor and bins tensors should have a "
                             f"floating dtype, got {x.dtype.name}")
    if weight is not None and weight.dtype is not x.dtype:
        raise _dt.DTypeError(f"torch.{op}: if weight tensor is provided it should have the "
                             f"same dtype as the input tensor")


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False,
              out: Any = None) -> Histogram:
    """Counts (or summed ``weight``) of ``input``'s values in ``bins`` (a count of equal
    bins over ``range``, or the edges); ``density`` normalises to unit area."""
    _check_float("histogram", input, weight)
    res = histogramdd(input.reshape(-1, 1), [bins], range=None if range is None else
                      list(range), weight=None if weight is None else weight.reshape(-1),
                      density=density)
    return write_out("histogram", Histogram(res.hist, res.bin_edges[0]), out)


def histogramdd(input: Tensor, bins: Any = 10, *, range: Any = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False,
                out: Any = None) -> HistogramDD:
    """The D-dimensional histogram of the points in the rows of ``input`` (..., D)."""
    _check_float("histogramdd", input, weight)
    if input.ndim < 1 or input.shape[-1] < 1:
        raise ShapeError(f"torch.histogramdd: expected points of at least one coordinate "
                         f"in the last dimension, got shape {list(input.shape)}")
    dims = input.shape[-1]
    pts = input.reshape(-1, dims)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        raise ValueError(f"torch.histogramdd: expected {dims} sequences of bin edges for "
                         f"each dimension, but got {len(per_dim)}")
    if range is not None and len(range) != 2 * dims:
        raise ValueError(f"torch.histogramdd: expected {2 * dims} values for range, got "
                         f"{len(range)}")
    with no_grad_ctx():
        edges, flat, inside = [], None, None
        for k in builtins.range(dims):
            col = pts[:, k]
            e = _edges(col, per_dim[k], None if range is None else range[2 * k:2 * k + 2])
            idx, ok = _bin_of(col, e)
            edges.append(e)
            flat = idx if flat is None else flat * (e.shape[0] - 1) + idx
            inside = ok if inside is None else inside & ok
        assert flat is not None and inside is not None  # dims >= 1 (checked above)
        shape = tuple(e.shape[0] - 1 for e in edges)
        w = creation.ones(pts.shape[0], dtype=input.dtype, device=input.device) \
            if weight is None else weight.reshape(-1)
        w = where(inside, w, 0) if pts.shape[0] else w
        hist = scatter_add(creation.zeros(prod(shape), dtype=input.dtype,
                                          device=input.device), 0,
                           where(inside, flat, 0) if pts.shape[0] else flat, w)
        hist = hist.reshape(shape)
        if density:
            hist = hist / hist.sum()
            for k, e in enumerate(edges):
                view = [1] * dims
                view[k] = e.shape[0] - 1
                hist = hist / (e[1:] - e[:-1]).reshape(view)
    return write_out("histogramdd", HistogramDD(hist, edges), out)


# ------------------------------------------------------------------- mode
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # noqa: A002
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and
    an index where it occurs."""
    x = input.reshape(1) if input.ndim == 0 else input
    d = normalize_axis(dim, x.ndim)
    n = x.shape[d]
    if n == 0:
        raise ShapeError(f"mode(): expected reduction dim {dim} to have non-zero size")
    with no_grad_ctx():
        sv = sort_torch(x, d, False, True)
        s, order = sv.values, sv.indices
        shape = [1] * x.ndim
        shape[d] = n
        pos = creation.arange(n, device=x.device).reshape(shape)
        starts = join.cat([creation.ones_like(s.narrow(d, 0, 1), dtype=_dt.bool_),
                           s.narrow(d, 1, n - 1) != s.narrow(d, 0, n - 1)], d)
        run_start = running_scan(where(starts, pos, 0), d, maximum)
        length = pos - run_start + 1  # length of the run so far, at each position
        best = length.amax(dim=d, keepdim=True)
        # the first position reaching the longest run holds the smallest modal value
        at = (length == best).to(_dt.int64).argmax(dim=d, keepdim=True)
        index = gather(order, d, at)
    values = gather(x, d, index)
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    if input.ndim == 0:
        values, index = values.reshape(()), index.reshape(())
    return ValuesIndices(values, index)


# ------------------------------------------------------------------- unique runs
def unique_consecutive(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """Each run of equal consecutive elements (or slices along ``dim``) collapsed to one;
    with ``return_inverse`` each element's run, with ``return_counts`` each run's length."""
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        x, d = input, normalize_axis(dim, input.ndim)
    n = x.shape[d] if x.ndim else 1
    with no_grad_ctx():
        if n == 0:
            new_run = creation.zeros(0, dtype=_dt.bool_, device=x.device)
        else:
            diff = x.narrow(d, 1, n - 1) != x.narrow(d, 0, n - 1)
            if x.ndim > 1:
                diff = diff.any(dim=tuple(k for k in builtins.range(x.ndim) if k != d))
            new_run = join.cat([creation.ones(1, dtype=_dt.bool_, device=x.device), diff], 0)
        starts = nonzero_torch(new_run).reshape(-1)
        group = new_run.to(_dt.int64).cumsum(0) - 1
        ends = join.cat([starts[1:], creation.full((1,), n, dtype=_dt.int64, device=x.device)])
    values = x.index_select(d, starts)
    out: list = [values]
    if return_inverse:
        out.append(group.reshape(input.shape) if dim is None else group)
    if return_counts:
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


# ------------------------------------------------------------------- quantiles
def nanquantile(input: Tensor, q: Any, dim: int | None = None,  # noqa: A002
                keepdim: bool = False, *, interpolation: str = "linear",
                out: Any = None) -> Tensor:
    """``quantile`` of the non-NaN values (NaN where a slice has none)."""
    x = input.reshape(-1) if dim is None or input.ndim == 0 else input
    a = 0 if dim is None else normalize_axis(dim, max(input.ndim, 1))
    if x.ndim == 0:
        x = x.reshape(1)
    if x.shape[a] == 0:
        raise ShapeError("nanquantile() input tensor must be non-empty")
    with no_grad_ctx():
        count = (x == x).sum(dim=a, keepdim=True)  # NaN sorts last: the valid ones lead
    res = quantile_of_sorted(sort_torch(x, a).values, a, count, q, interpolation)
    return write_out("nanquantile", finish_quantile(res, input, q, dim, a, keepdim), out)


# ------------------------------------------------------------------- indices
def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in ``shape`` of flat (C-order) ``indices``, one tensor per dim
    (indices wrap around modulo the size, as torch)."""
    if not isinstance(indices, Tensor):
        indices = creation.tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expected 'indices' to be an integer tensor, got "
                        f"{indices.dtype.name}")
    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in dims):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, got {dims}")
    idx = indices.to(_dt.int64)
    coords = []
    for n in reversed(dims):
        coords.append(idx % n if n else idx * 0)
        idx = idx // n if n else idx * 0
    return tuple(reversed(coords))


def combinations(input: Tensor, r: int = 2,  # noqa: A002
                 with_replacement: bool = False) -> Tensor:
    """Every length-``r`` combination of the 1-D ``input``'s elements, one per row (in
    ``itertools.combinations`` order)."""
    if input.ndim != 1:
        raise ShapeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise ValueError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(builtins.range(input.shape[0]), r))  # positions only: no data read
    if not rows:
        return creation.empty((0, r), dtype=input.dtype, device=input.device)
    idx = creation.tensor(rows, dtype=_dt.int64, device=input.device)
    return input[idx.reshape(-1)].reshape(len(rows), r)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """``nonzero`` as a (size, ndim) tensor: truncated, or padded with ``fill_value``."""
    if size < 0:
        raise ValueError(f"nonzero_static: 'size' must be a non-negative integer, got {size}")
    nz = nonzero_torch(input)
    if nz.shape[0] >= size:
        return nz[:size]
    pad = creation.full((size - nz.shape[0], nz.shape[1]), fill_value, dtype=_dt.int64,
                        device=input.device)
    return join.cat([nz, pad], 0)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of ``shapes`` broadcast to (an int is a 1-D shape)."""
    as_tuples: list[tuple[int, ...]] = []
    for s in shapes:
        if isinstance(s, int):
            as_tuples.append((s,))
        elif isinstance(s, Sequence):
            as_tuples.append(tuple(int(v) for v in s))
        else:
            raise TypeError(f"broadcast_shapes: expected ints or sequences of ints, got "
                            f"{type(s).__name__}")
    return Size(_broadcast_shapes(*as_tuples))


def bind(T: Any) -> None:
    """Tensor methods of this module."""
    T.histogram, T.mode, T.unique_consecutive = histogram, mode, unique_consecutive
    T.nanquantile = nanquantile
