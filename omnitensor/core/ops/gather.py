"""Gather and scatter along one axis (torch's gather/scatter/index_select/take...),
masks and nonzero. Built on the ``gather_nd``/``scatter_nd`` primitives, with the index
bounds checked once here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import DeviceMismatchError, ShapeError, mismatch_message
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import broadcast_shapes, normalize_axis
from ..tensor import Tensor, _make
from .indexing import _checked_indices, _scalar_of, getitem, select_along
from .join import pad_constant, stack
from .creation import tensor, zeros
from .ternary import where
from .storage_dtypes import round_widened

# ------------------------------------------------------------- gather and scatter
def _dim_indices(x_shape: tuple, dim: int, index: Tensor) -> tuple:
    """Full per-axis index arrays for torch's gather/scatter along ``dim``."""
    be = index._device.backend
    shape = index.shape
    idx = []
    for d in range(len(shape)):
        if d == dim:
            idx.append(index._data)
        else:
            r = be.arange(0, 1, shape[d], np.dtype(np.int64), index._device.index)
            r = be.reshape(r, tuple(shape[d] if i == d else 1 for i in range(len(shape))))
            idx.append(be.broadcast_to(r, shape))
    return tuple(idx)


def _check_gather(op: str, x: Tensor, dim: int, index: Tensor) -> tuple[int, Tensor]:
    if not isinstance(index, Tensor) or index._dtype.kind not in "iu":
        raise _dt.DTypeError(f"{op}(): Expected dtype int64 for index")
    if index._device is not x._device:
        raise DeviceMismatchError(mismatch_message(op, x.device, index.device))
    d = normalize_axis(dim, x.ndim)
    if index.ndim != x.ndim:
        raise ShapeError(f"{op}: index tensor must have the same number of dimensions as "
                         f"input tensor ({index.ndim} vs {x.ndim})")
    for i, (a, b) in enumerate(zip(index.shape, x.shape)):
        if i != d and a > b:
            raise ShapeError(f"{op}: size of index {index.shape} exceeds input {x.shape} at "
                             f"dimension {i}")
    # torch refuses a negative index here (no wrapping, unlike getitem)
    return d, _checked_indices(index, x.shape[d], d, negative=False)


def _zero_d(x: Tensor, index: Tensor) -> bool:
    """torch takes a 0-d input or index of gather/scatter as 1-D of one element (its
    ``ensure_nonempty_dim``), so a 0-d one pairs with a 1-D or 0-d other."""
    return x.ndim <= 1 and index.ndim <= 1 and (x.ndim == 0 or index.ndim == 0)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` for dim 0 (torch's gather)."""
    if isinstance(index, Tensor) and index.numel() == 0:
        normalize_axis(dim, x.ndim)  # torch checks the dim only (no sizes, no ndim)
        return zeros(index.shape, dtype=x.dtype, device=x.device)
    if isinstance(index, Tensor) and _zero_d(x, index):
        normalize_axis(dim, 1)
        return gather(x.reshape(-1), 0, index.reshape(-1)).reshape(index.shape)
    d, index = _check_gather("gather", x, dim, index)
    be = x._device.backend
    native = be.hook("take_along_axis")
    if native is not None and x.ndim:
        src = x._data
        if any(n != m for k, (n, m) in enumerate(zip(index.shape, x.shape)) if k != d):
            # torch lets index be smaller than x off the gather axis: those rows only
            src = be.index(src, tuple(slice(0, n if k != d else m, 1)
                                      for k, (n, m) in enumerate(zip(index.shape, x.shape))))
        data = native(src, index._data, d)
    else:
        data = be.gather_nd(x._data, _dim_indices(x.shape, d, index))
    out = _make(data, x._device, x._dtype)
    if needs_grad(x):
        record("GatherBackward0", _gather_backward, out, (x,), (index,), dim=d, shape=x.shape)
    return out


def _gather_backward(node: Any, g: Tensor) -> tuple:
    (index,) = node.saved_tensors
    base = zeros(node.shape, dtype=g.dtype, device=g.device)
    return (scatter_add(base, node.dim, index, g),)


def _scatter(x: Tensor, dim: int, index: Tensor, src: Any, accumulate: bool,
             name: str) -> Tensor:
    if isinstance(src, Tensor) and src.dtype is not x.dtype:
        raise _dt.DTypeError(f"{name}(): Expected self.dtype to be equal to src.dtype, got "
                             f"{x.dtype.name} and {src.dtype.name}")
    if isinstance(index, Tensor) and index.numel() == 0:
        normalize_axis(dim, x.ndim)  # torch: an empty index writes nothing, checks the dim
        return x.clone()
    if isinstance(src, Tensor) and isinstance(index, Tensor) and \
            max(src.ndim, 1) != max(index.ndim, 1):
        raise ShapeError("Index tensor must have the same number of dimensions as src tensor")
    if isinstance(src, Tensor) and isinstance(index, Tensor) and any(
            a > b for a, b in zip(index.shape or (1,), src.shape or (1,))):
        # torch: src gives each index entry its value, so it is at least as large (a 0-d
        # one counts as one element)
        raise ShapeError(f"Expected index {list(index.shape)} to be no larger than self "
                         f"{list(x.shape)} apart from dimension {dim} and to be no larger "
                         f"size than src {list(src.shape)}")
    if isinstance(index, Tensor) and _zero_d(x, index):
        normalize_axis(dim, 1)
        s = src.reshape(-1) if isinstance(src, Tensor) else src
        out = _scatter(x.reshape(-1), 0, index.reshape(-1), s, accumulate, name)
        return out.reshape(x.shape)
    d, index = _check_gather(name, x, dim, index)
    be = x._device.backend
    with no_grad_ctx():
        out = x.clone()
        if isinstance(src, Tensor):
            sd = src._data if src._dtype is x._dtype else be.astype(src._data, x._dtype.np)
            if src.ndim == 0:  # one element for a one-element index (checked above)
                sd = be.reshape(sd, (1,) * index.ndim)
            if src.shape != index.shape:
                sd = be.index(sd, tuple(slice(0, n, 1) for n in index.shape))
        else:
            sd = be.broadcast_to(be.full((), _scalar_of(x, src), x._dtype.np, x._device.index),
                                 index.shape)
        be.scatter_nd(out._data, _dim_indices(x.shape, d, index), sd, accumulate)
        if accumulate:
            round_widened(out)
    if needs_grad(x, src):
        record("ScatterAddBackward0" if accumulate else "ScatterBackward0", _scatter_backward,
               out, (x, src if isinstance(src, Tensor) else None), (index,), dim=d,
               accumulate=accumulate, src_shape=getattr(src, "shape", None))
    return out


def _scatter_backward(node: Any, g: Tensor) -> tuple:
    (index,) = node.saved_tensors
    gx = gs = None
    if node.needs_input_grad[0]:
        gx = g if node.accumulate else scatter(g, node.dim, index, 0)
    if node.needs_input_grad[1]:
        gs = gather(g, node.dim, index)
        if gs.shape != node.src_shape:
            gs = pad_constant(gs, [(0, s - n) for s, n in zip(node.src_shape, gs.shape)])
    return gx, gs


def scatter(x: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """Out of place: ``out[index[i][j]][j] = src[i][j]`` for dim 0 (torch); ``src`` a
    tensor or a scalar (torch's ``value=``); ``reduce='add'`` sums into x like
    ``scatter_add``, ``reduce='multiply'`` multiplies."""
    if src is None:
        if value is None:
            raise TypeError("scatter: pass src (a tensor or a scalar) or value=")
        src = value
    if reduce is not None:  # torch's scatter(reduce='add'|'multiply')
        from .scatter_reduce import scatter_with_reduce
        return scatter_with_reduce(x, dim, index, src, reduce)
    return _scatter(x, dim, index, src, False, "scatter")


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out of place: ``out[index[i][j]][j] += src[i][j]`` (duplicates summed)."""
    return _scatter(x, dim, index, src, True, "scatter_add")


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """Entries of ``x`` at the 1-D ``index`` along ``dim``."""
    if not isinstance(index, Tensor) or index._dtype.kind not in "iu":
        raise _dt.DTypeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise ShapeError(f"index_select: index must be 1-D, got {index.ndim}-D")
    if index._device is not x._device:  # torch too (x[index] alone accepts a cpu index)
        raise DeviceMismatchError(mismatch_message("index_select", x.device, index.device))
    if x.ndim == 0:  # torch: a 0-d input is one element along dim 0, picked once
        normalize_axis(dim, 1)
        if index.numel() != 1:
            raise ShapeError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{index.numel()} value(s)")
        return select_along(x.reshape(1), 0, index, "index out of range in self").reshape(())
    d = normalize_axis(dim, x.ndim)
    # torch refuses a negative index (getitem would wrap it)
    return select_along(x, d, index, "index out of range in self")


def take(x: Tensor, indices: Any, /, *, axis: int | None = None) -> Tensor:
    """Elements at ``indices`` along ``axis`` (of the flattened tensor when None)."""
    if not isinstance(indices, Tensor):
        indices = tensor(indices, device=x.device)
    if axis is None:
        return getitem(x.reshape(-1), (indices,))
    d = normalize_axis(axis, x.ndim)
    return getitem(x, (slice(None),) * d + (indices,))


def take_along_axis(x: Tensor, indices: Tensor, /, axis: int = -1) -> Tensor:
    """Array API / NumPy ``take_along_axis`` (non-axis dims broadcast)."""
    d = normalize_axis(axis, x.ndim)
    if indices.ndim != x.ndim:
        raise ShapeError(f"take_along_axis: indices must have {x.ndim} dims, got "
                         f"{indices.ndim}")
    # broadcast every axis but ``axis`` itself
    others = broadcast_shapes(tuple(1 if i == d else n for i, n in enumerate(x.shape)),
                              tuple(1 if i == d else n for i, n in enumerate(indices.shape)))
    shape_x = tuple(x.shape[i] if i == d else n for i, n in enumerate(others))
    shape_i = tuple(indices.shape[i] if i == d else n for i, n in enumerate(others))
    if indices._dtype.kind in "iu":  # NumPy and torch's take_along_dim wrap negatives,
        indices = where(indices < 0, indices + x.shape[d], indices)  # gather does not
    return gather(x.broadcast_to(shape_x), d, indices.broadcast_to(shape_i))


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        return take(x, indices.reshape(-1))
    return take_along_axis(x, indices, dim)


def masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` where ``mask`` else x (x's dtype kept)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError("masked_fill only supports a 0-dimensional value tensor")
        if not needs_grad(value):
            value = value.item()
    if isinstance(value, (bool, int, float, complex)):
        value = _scalar_of(x, value)
    out = where(mask, value, x)
    return out if out._dtype is x._dtype else out.to(x._dtype)


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The 1-D tensor of x's elements where ``mask`` (broadcast) is True."""
    shape = broadcast_shapes(x.shape, mask.shape)
    return getitem(x.broadcast_to(shape), (mask.broadcast_to(shape),))


def nonzero(x: Tensor, /) -> tuple[Tensor, ...]:
    """Array API ``nonzero``: a tuple of int64 index tensors, one per axis."""
    if x.ndim == 0:
        raise ValueError("nonzero is not defined for 0-d tensors; use x.reshape(1)")
    coords = x._device.backend.nonzero(x._data)
    return tuple(_make(c, x._device, _dt.int64) for c in coords)


def nonzero_torch(x: Tensor, *, as_tuple: bool = False) -> Any:
    """torch's ``nonzero``: an (N, ndim) int64 tensor, or a tuple with ``as_tuple``."""
    if as_tuple:
        return nonzero(x) if x.ndim else nonzero(x.reshape(1))
    if x.ndim == 0:
        return zeros((1 if x.item() else 0, 0), dtype=_dt.int64, device=x.device)
    return stack(nonzero(x), 1)


def count_nonzero(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Number of non-zero elements (int64)."""
    return (x != 0).sum(axis=axis, keepdims=keepdims)
