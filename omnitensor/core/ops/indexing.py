"""Indexing: ``x[key]``, ``x[key] = v``, gather/scatter, masks, nonzero, take.

Every advanced-indexing case reduces to two backend primitives, ``gather_nd`` and
``scatter_nd`` (one index array per axis), so a backend without native fancy indexing
(OpenCL) gets the whole NumPy/torch indexing model. Backends with native NumPy-style
indexing may offer ``index_advanced``/``index_put_advanced`` fast paths.
Indices are bounds-checked here (one device sync per advanced index), so backends never
see an out-of-range index and users get an IndexError instead of garbage.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import DeviceMismatchError, IndexOutOfRangeError, ShapeError, mismatch_message
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import broadcast_shapes
from ..tensor import Tensor, _make
from .shape import _as_view, scatter_into_zeros, sum_to
from .creation import tensor, zeros
from .elementwise import _PY_OF_KIND
from .ternary import where
from .inplace import apply_inplace, check_leaf
from .storage_dtypes import round_widened


# the keys (gather, sparse and methods import _checked_indices/normalize_key from here)
from .index_keys import _Key, _checked_indices, bool_scalars_as_indices, normalize_key


def select_along(x: Tensor, d: int, index: Tensor, message: str | None = None) -> Tensor:
    """``x`` at the 1-D ``index`` along axis ``d`` (torch's index_select): indices in
    ``[0, n)`` only, checked once here (so getitem's own check is not repeated);
    ``message`` replaces the bounds error's text (torch's index_select has its own)."""
    try:
        idx = _checked_indices(index.reshape(-1), x.shape[d], d, negative=False)
    except IndexOutOfRangeError as e:
        if message is None:
            raise
        raise IndexOutOfRangeError(message) from e
    entries: list = [slice(0, n, 1) for n in x.shape]
    entries[d] = idx
    key = _Key(entries, True, [])
    out = _gather(x, key)
    if needs_grad(x):
        record("IndexBackward0", _getitem_backward, out, (x,), shape=x.shape, key=key)
    return out


def _basic_part(x: Tensor, key: _Key) -> tuple[tuple, list[int], list[Tensor]]:
    """(basic key with advanced entries as full slices, their positions in the basic
    result's axes, the index tensors)."""
    basic, positions, tensors = [], [], []
    out_axis = 0
    in_axis = 0
    for k in key.entries:
        if k is not None:
            in_axis += 1
        if isinstance(k, Tensor):
            basic.append(slice(0, x.shape[in_axis - 1], 1))
            positions.append(out_axis)
            tensors.append(k)
            out_axis += 1
        else:
            basic.append(k)
            if not isinstance(k, int):
                out_axis += 1
    return tuple(basic), positions, tensors


def _basic_view(x: Tensor, basic: tuple) -> Tensor:
    data = x._device.backend.index(x._data, basic) if basic else x._data
    return _as_view(x, data, lambda b: b[basic])


# ----------------------------------------------------------------------- getitem
def getitem(x: Tensor, key: Any) -> Tensor:
    try:
        return _getitem(x, key)
    except IndexOutOfRangeError as error:
        if x.numel():
            raise
        # torch bounds-checks an index tensor only as it reads: an empty tensor whose
        # result is empty too reads nothing, so any index is fine there
        try:
            out = _getitem(x, _zeroed_index_tensors(key))
        except IndexOutOfRangeError:
            raise error from None  # (naming the user's index, not the zeroed one)
        if out.numel():
            raise
        return out


def _zeroed_index_tensors(key: Any) -> Any:
    """``key`` with its integer index tensors (and int lists) replaced by zeros of their
    shape: the result's shape without the indices' bounds. A 0-d index tensor stays: torch
    reads it as an int, which is always checked."""
    if isinstance(key, Tensor):
        return key if key._dtype.kind not in "iu" or not key.ndim else \
            zeros(key.shape, dtype=key.dtype, device=key.device)
    if isinstance(key, list):
        arr = np.asarray(key)
        return np.zeros(arr.shape, np.int64).tolist() if arr.dtype.kind in "iu" else key
    if isinstance(key, tuple):
        return tuple(_zeroed_index_tensors(k) if isinstance(k, (Tensor, list)) else k
                     for k in key)
    return key


def _getitem(x: Tensor, key: Any) -> Tensor:
    as_indices = bool_scalars_as_indices(x, key)
    if as_indices is not None:
        x, key = as_indices
    k = normalize_key(x, key)
    if not k.advanced:
        out = _basic_view(x, tuple(k.entries))
        if k.empty_axes:
            out = out[tuple(slice(0, 0) if i in k.empty_axes else slice(None)
                            for i in range(out.ndim))]
        if needs_grad(x):
            record("SliceBackward0", _getitem_backward, out, (x,), shape=x.shape, key=k)
        return out
    out = _gather(x, k)
    if needs_grad(x):
        record("IndexBackward0", _getitem_backward, out, (x,), shape=x.shape, key=k)
    return out


def _getitem_backward(node: Any, g: Tensor) -> tuple:
    if not node.key.advanced:
        key = node.key
        return (scatter_into_zeros(g, node.shape, lambda t: _replay_basic(t, key)),)
    return (index_put_functional(None, node.key, g, accumulate=True, shape=node.shape),)


def _replay_basic(t: Tensor, key: _Key) -> Tensor:
    with no_grad_ctx():
        out = _basic_view(t, tuple(key.entries))
    if key.empty_axes:
        out = out[tuple(slice(0, 0) if i in key.empty_axes else slice(None)
                        for i in range(out.ndim))]
    if needs_grad(t):
        record("SliceBackward0", _getitem_backward, out, (t,), shape=t.shape, key=key)
    return out


def _plan(y: Tensor, positions: list[int], tensors: list[Tensor]) -> tuple:
    """Permutation putting advanced axes first, the broadcast index shape and the full
    per-axis index tuple for gather_nd/scatter_nd."""
    try:
        s = broadcast_shapes(*[t.shape for t in tensors])
    except ShapeError:
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {', '.join(str(list(t.shape)) for t in tensors)}"
                         ) from None
    rest = [d for d in range(y.ndim) if d not in positions]
    perm = positions + rest
    rest_shape = tuple(y.shape[d] for d in rest)
    full_shape = s + rest_shape
    be = y._device.backend
    idx = []
    lead = len(s)
    for t in tensors:
        data = t._data
        if t.shape != s:
            data = be.broadcast_to(data, s)
        data = be.reshape(data, s + (1,) * len(rest))
        idx.append(be.broadcast_to(data, full_shape))
    for j, n in enumerate(rest_shape):
        r = be.arange(0, 1, n, np.dtype(np.int64), y._device.index)
        shape = (1,) * lead + tuple(n if i == j else 1 for i in range(len(rest)))
        idx.append(be.broadcast_to(be.reshape(r, shape), full_shape))
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return perm, s, full_shape, tuple(idx), adjacent


def _result_perm(ndim_s: int, ndim_total: int, first_pos: int) -> tuple[int, ...]:
    """Move the broadcast-index block (first ``ndim_s`` axes) to ``first_pos``."""
    order = list(range(ndim_s, ndim_total))
    return tuple(order[:first_pos] + list(range(ndim_s)) + order[first_pos:])


def _native_key(x: Tensor, key: _Key) -> tuple[Any, tuple]:
    """(array, key) for a backend's native NumPy-style advanced indexing. torch applies
    integer entries as basic indexing first, where NumPy makes them advanced indices too
    (``x[0, :, idx]``: NumPy puts idx's axes first, torch after the slice's): so the ints
    select a view first and the rest is indexed natively."""
    entries = key.entries
    if not any(type(e) is int for e in entries):
        return x._data, tuple(e._data if isinstance(e, Tensor) else e for e in entries)
    basic = tuple(e if type(e) is int else slice(None) for e in entries if e is not None)
    return (x._device.backend.index(x._data, basic),
            tuple(e._data if isinstance(e, Tensor) else e for e in entries
                  if type(e) is not int))


def _gather(x: Tensor, key: _Key) -> Tensor:
    be = x._device.backend
    fast = be.hook("index_advanced")
    if fast is not None:
        try:
            data = fast(*_native_key(x, key))
            return _make(data, x._device, x._dtype)
        except NotImplementedError:
            pass  # a key the library cannot index natively: the general path below
        except IndexError as e:
            if be.checks_index_bounds:
                raise IndexOutOfRangeError(str(e)) from None
            raise
    basic, positions, tensors = _basic_part(x, key)
    with no_grad_ctx():
        y = _basic_view(x, basic)
    perm, s, full_shape, idx, adjacent = _plan(y, positions, tensors)
    yp = be.permute(y._data, tuple(perm))
    data = be.gather_nd(yp, idx)
    if adjacent and positions[0] > 0:
        data = be.contiguous(be.permute(data, _result_perm(len(s), len(full_shape),
                                                           positions[0])))
    return _make(data, x._device, x._dtype)


# ----------------------------------------------------------------------- setitem
def _value_data(x: Tensor, value: Any, shape: tuple) -> Any:
    """Backend data of ``value`` in x's dtype, broadcast to ``shape`` (scalars pass)."""
    be = x._device.backend
    if isinstance(value, Tensor):
        if value._device is not x._device:
            if value.ndim == 0 and value._device.type == "cpu":
                return _scalar_of(x, value.item())
            raise DeviceMismatchError(mismatch_message("setitem", x.device, value.device))
        data = value._data if value._dtype is x._dtype else be.astype(value._data, x._dtype.np)
        if data.shape != shape:
            try:
                bshape = broadcast_shapes(data.shape, shape)
            except ShapeError:
                bshape = None
            if bshape != shape:
                # torch allows leading size-1 axes in the value
                squeezed = tuple(data.shape)
                while len(squeezed) > len(shape) and squeezed[0] == 1:
                    squeezed = squeezed[1:]
                if broadcast_shapes(squeezed, shape) != shape if len(squeezed) <= len(shape) \
                        else True:
                    raise ShapeError(f"shape mismatch: value tensor of shape {value.shape} "
                                     f"cannot be broadcast to indexing result of shape "
                                     f"{shape}")
                data = be.reshape(data, squeezed)
            data = be.broadcast_to(data, shape)
        return data
    if isinstance(value, (bool, int, float, complex)):
        return _scalar_of(x, value)
    return _value_data(x, tensor(value, device=x.device, dtype=x.dtype), shape)


def _scalar_of(x: Tensor, v: Any) -> Any:
    if x._dtype.kind in "iub" and isinstance(v, float):
        v = int(v)
    if x._dtype.kind == "f" and isinstance(v, complex):
        raise _dt.DTypeError(f"cannot assign a complex value to a {x.dtype.name} tensor")
    return _PY_OF_KIND[x._dtype.kind](v)


def _write(x: Tensor, key: _Key, value: Any, accumulate: bool = False) -> None:
    """The raw in-place write ``x[key] = value`` (or ``+=``), no autograd."""
    _write_raw(x, key, value, accumulate)
    if accumulate:
        round_widened(x)


def _write_raw(x: Tensor, key: _Key, value: Any, accumulate: bool) -> None:
    be = x._device.backend
    if not key.advanced:
        view = _basic_view(x, tuple(key.entries))
        if key.empty_axes or view.numel() == 0:
            return
        v = _value_data(x, value, view.shape)
        if accumulate:
            v = be.add(view._data, v)
        be.assign(view._data, v)
        return
    fast = be.hook("index_add_advanced" if accumulate else "index_put_advanced")
    index = be.hook("index_advanced")  # the fast path reads the indexed shape with it
    if fast is not None and index is not None:
        data, entries = _native_key(x, key)  # a view of x where ints select first
        try:
            shape = index(data, entries).shape
            fast(data, entries, _value_data(x, value, shape))
            return
        except NotImplementedError:
            pass
        except IndexError as e:
            if be.checks_index_bounds:
                raise IndexOutOfRangeError(str(e)) from None
            raise
    basic, positions, tensors = _basic_part(x, key)
    y = _basic_view(x, basic)
    perm, s, full_shape, idx, adjacent = _plan(y, positions, tensors)
    if adjacent and positions[0] > 0:
        res_perm = _result_perm(len(s), len(full_shape), positions[0])
        res_shape = tuple(full_shape[p] for p in res_perm)
        v = _value_data(x, value, res_shape)
        if not isinstance(v, (bool, int, float, complex)):
            inv = tuple(sorted(range(len(res_perm)), key=res_perm.__getitem__))
            v = be.permute(v, inv)
    else:
        v = _value_data(x, value, full_shape)
    if isinstance(v, (bool, int, float, complex)):
        v = be.broadcast_to(be.full((), v, x._dtype.np, x._device.index), full_shape)
    be.scatter_nd(be.permute(y._data, tuple(perm)), idx, v, accumulate)


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value`` in place (torch semantics, autograd-aware)."""
    if isinstance(key, Tensor) and key._dtype is _dt.bool_ and key.shape == x.shape and \
            not needs_grad(x, value) and isinstance(value, (bool, int, float)):
        # x[mask] = scalar: one where, no device sync
        res = where(key, value, x)
        x._device.backend.assign(x._data, res._data if res._dtype is x._dtype else
                                 x._device.backend.astype(res._data, x._dtype.np))
        x._bump_version()
        return
    as_indices = bool_scalars_as_indices(x, key)
    if as_indices is not None:  # a view of x with the bools' axes: written through
        setitem(*as_indices, value)
        return
    k = normalize_key(x, key)
    if needs_grad(x, value):
        check_leaf(x)
        apply_inplace(x, lambda base: index_put_functional(base, k, value), "setitem")
        return
    _write(x, k, value)
    x._bump_version()


def index_put_functional(x: Tensor | None, key: _Key, value: Any, accumulate: bool = False,
                         shape: tuple | None = None) -> Tensor:
    """Out of place ``x[key] = value`` (``+=`` with ``accumulate``); x None means zeros of
    ``shape``. Differentiable in x and value."""
    with no_grad_ctx():
        if x is None:
            out = zeros(shape, dtype=value.dtype, device=value.device)
        else:
            out = x.clone()
        _write(out, key, value.detach() if isinstance(value, Tensor) else value, accumulate)
    if needs_grad(x, value):
        vshape = value.shape if isinstance(value, Tensor) else None
        record("IndexPutBackward0", _index_put_backward, out,
               (x, value if isinstance(value, Tensor) else None), key=key,
               accumulate=accumulate, vshape=vshape)
    return out


def _index_put_backward(node: Any, g: Tensor) -> tuple:
    key = node.key
    gx = gv = None
    if node.needs_input_grad[0]:
        gx = g if node.accumulate else index_put_functional(g, key, 0)
    if node.needs_input_grad[1]:
        sel = getitem_key(g, key)
        gv = _reduce_to(sel, node.vshape, sum_to)
    return gx, gv


def _reduce_to(sel: Tensor, vshape: tuple, sum_to: Any) -> Tensor:
    if sel.shape == vshape:
        return sel
    if len(vshape) < sel.ndim or sel.ndim == len(vshape):
        return sum_to(sel, vshape)
    return sel.reshape(vshape)


def getitem_key(x: Tensor, key: _Key) -> Tensor:
    """``x[key]`` for an already normalised key (autograd-aware)."""
    if not key.advanced:
        return _replay_basic(x, key)
    out = _gather(x, key)
    if needs_grad(x):
        record("IndexBackward0", _getitem_backward, out, (x,), shape=x.shape, key=key)
    return out
