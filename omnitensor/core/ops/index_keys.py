"""Index keys: ``x[key]``'s key normalised to one entry per axis (``normalize_key``), as
torch reads it, and the bounds check of index tensors (``_checked_indices``: one reduction,
one device sync). ``indexing`` runs the keys."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import DeviceMismatchError, IndexOutOfRangeError, ShapeError
from .. import capture_hooks
from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..shape_util import broadcast_shapes
from ..tensor import Tensor, _make
from .creation import tensor
from .ternary import where

__all__ = ["normalize_key", "bool_scalars_as_indices"]


class _Key:
    """A normalised index: ``entries`` hold None, int, slice or int64 Tensors (one per
    consumed axis, Ellipsis expanded, masks turned into coordinates)."""

    __slots__ = ("entries", "advanced", "empty_axes")

    def __init__(self, entries: list, advanced: bool, empty_axes: list) -> None:
        self.entries = entries
        self.advanced = advanced
        self.empty_axes = empty_axes


def _to_index_tensor(k: Any, x: Tensor) -> Tensor:
    arr = np.asarray(k)
    if arr.dtype == object or arr.dtype.kind not in "biu":
        if arr.size == 0:
            arr = arr.astype(np.int64)
        else:
            raise IndexError(f"only integers, slices, None, Ellipsis, and integer or boolean "
                             f"tensors are valid indices (got {type(k).__name__} of "
                             f"{arr.dtype})")
    return tensor(arr, device=x.device)


def _key_item(x: Tensor, k: Any) -> Any:
    """One element of an index key: None, ``...``, a slice, a bool, an int, or an index
    tensor on ``x``'s device (0-d index tensors become Python scalars)."""
    if k is None or k is Ellipsis or isinstance(k, slice) or isinstance(k, bool):
        return k
    if isinstance(k, Tensor):
        if k._device is not x._device and not (k.ndim == 0 and k._device.type == "cpu"):
            if k._device.type == "cpu":
                k = k.to(x._device)
            else:  # torch: indices on cpu or on the indexed tensor's device
                raise DeviceMismatchError(
                    f"indices on {k.device} cannot index a tensor on {x.device}: index "
                    f"tensors must be on the indexed tensor's device"
                    f"{'' if x._device.type == 'cpu' else ' or on cpu'}; move them with "
                    f".to('{x.device}')")
        if k._dtype.kind not in "biu":
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got {k.dtype.name}")
        if k.ndim == 0:
            return bool(k.item()) if k._dtype is _dt.bool_ else int(k.item())
        return k
    if isinstance(k, (list, np.ndarray, range)):  # a range is a sequence, as in torch
        return _to_index_tensor(k, x)
    if hasattr(k, "__index__"):
        return int(k.__index__())
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer "
                     f"or boolean tensors are valid indices (got {type(k).__name__})")


def _fill_ellipsis(x: Tensor, items: list) -> list:
    """The key with one entry per axis of ``x``: ``...`` (or the end) stands for full
    slices of the axes no other element consumes."""
    consumed = 0
    for k in items:
        if isinstance(k, Tensor):
            consumed += k.ndim if k._dtype is _dt.bool_ else 1
        elif k is not None and k is not Ellipsis and not isinstance(k, bool):
            consumed += 1
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {consumed})")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (x.ndim - consumed)
    else:
        items += [slice(None)] * (x.ndim - consumed)
    return items


def _is_bool_scalar(k: Any) -> bool:
    return isinstance(k, bool) or (isinstance(k, Tensor) and k.ndim == 0 and
                                   k._dtype is _dt.bool_)


def _consumes(k: Any) -> int:
    """How many of the indexed tensor's axes a converted key element consumes."""
    if isinstance(k, Tensor):
        return k.ndim if k._dtype is _dt.bool_ else 1
    return 0 if k is None or k is Ellipsis or isinstance(k, bool) else 1


_PLAIN = (slice, int)


def bool_scalars_as_indices(x: Tensor, key: Any) -> tuple[Tensor, tuple] | None:
    """torch's reading of the Python bools (and 0-d bool tensors) of a key: each is a new
    size-1 axis indexed by ``[0]`` (True) or ``[]`` (False), an advanced index that
    broadcasts with the key's others (``x[True, True]`` adds one axis, not two;
    ``x[[0, 1], True]`` keeps only the list's axis). Returns (``x`` with those axes, the
    key over it), or None where the plain reading (one True: a new axis) is the same."""
    if key.__class__ in _PLAIN:  # the common keys (x[1:3], x[0]): nothing to convert
        return None
    raw = key if isinstance(key, tuple) else (key,)
    for k in raw:
        if k.__class__ not in _PLAIN and k is not None and k is not Ellipsis and \
                _is_bool_scalar(k):
            break
    else:  # no bool: nothing converted
        return None
    items = [_key_item(x, k) for k in raw]
    flags = [k for k in items if isinstance(k, bool)]
    consumed = sum(_consumes(k) for k in items)
    if consumed > x.ndim or (flags == [True] and not any(isinstance(k, Tensor)
                                                         for k in items)):
        return None  # normalize_key names too many indices; a lone True is a new axis
    axes: list[int] = []
    new_key: list = []
    axis = 0
    for k in items:
        if isinstance(k, bool):
            axes.append(axis + len(axes))  # its axis in the expanded tensor
            new_key.append(tensor([0] if k else [], dtype=_dt.int64, device=x.device))
            continue
        axis += x.ndim - consumed if k is Ellipsis else _consumes(k)
        new_key.append(k)
    for a in axes:
        x = x.unsqueeze(a)
    return x, tuple(new_key)


def normalize_key(x: Tensor, key: Any) -> _Key:
    """``x[key]``'s key as per-axis entries: each element converted and checked
    (``_key_item``), the ellipsis expanded, then bounds, slices and masks resolved."""
    if not isinstance(key, tuple):
        key = (key,)
    items = _fill_ellipsis(x, [_key_item(x, k) for k in key])
    unread = None  # whether the index tensors read nothing: asked at the first one
    # second pass: bounds, slices, masks
    entries: list = []
    empty_axes: list = []
    axis = 0
    advanced = False
    for k in items:
        if k is None:
            entries.append(None)
        elif isinstance(k, bool):
            if not k:
                empty_axes.append(len(entries))
            entries.append(None)
        elif isinstance(k, int):
            n = x.shape[axis]
            if not -n <= k < n:
                raise IndexOutOfRangeError(f"index {k} is out of bounds for dimension {axis} "
                                           f"with size {n}")
            entries.append(k % n)
            axis += 1
        elif isinstance(k, slice):
            n = x.shape[axis]
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            r = range(*k.indices(n))
            if len(r) == 0:
                entries.append(slice(0, 0, 1))
            else:
                entries.append(slice(r.start, r.stop if r.stop >= 0 else None, r.step))
            axis += 1
        else:  # index tensor
            advanced = True
            if k._dtype is _dt.bool_:
                mshape = x.shape[axis:axis + k.ndim]
                if k.shape != mshape:
                    raise IndexError(f"the shape of the mask {list(k.shape)} at index {axis} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{list(mshape)}")
                coords = k._device.backend.nonzero(k._data)
                for c in coords:
                    entries.append(_make(c, k._device, _dt.int64))
                axis += k.ndim
            else:
                if x._device.backend.checks_index_bounds:
                    entries.append(k)  # the backend raises IndexError itself, cheaply
                elif unread or unread is None and (unread := _reads_nothing(items)):
                    # nothing is read, so torch checks no bounds
                    entries.append(k if k._dtype is _dt.int64 else k.to(_dt.int64))
                else:
                    entries.append(_checked_indices(k, x.shape[axis], axis))
                axis += 1
    return _Key(entries, advanced, empty_axes)


def _reads_nothing(items: list) -> bool:
    """Whether the integer index tensors of a key (one without masks) broadcast to an
    empty shape: torch checks indices as it reads them, so then any index is fine."""
    tensors = [k for k in items if isinstance(k, Tensor)]
    if not tensors or any(k._dtype is _dt.bool_ for k in tensors):
        return False
    try:
        return 0 in broadcast_shapes(*[k.shape for k in tensors])
    except ShapeError:
        return False  # the gather names the mismatch


def _checked_indices(idx: Tensor, n: int, axis: int, negative: bool = True) -> Tensor:
    """int64 indices with negatives wrapped; IndexError when any is out of range.
    ``negative=False`` is torch's rule for gather/scatter/index_select: an index must lie
    in ``[0, n)`` (no wrapping), checked by the same single reduction."""
    with no_grad_ctx():
        if idx._dtype is not _dt.int64:
            idx = idx.to(_dt.int64)
        if idx.numel():
            low = -n if negative else 0
            # one reduction, one device sync: every index inside [low, n)? (a validation
            # read: under a capture a "check" node, not a graph break)
            if not capture_hooks.check(((idx >= low) & (idx < n)).all(),
                                       f"index out of bounds for dimension {axis} with "
                                       f"size {n}", IndexOutOfRangeError):
                outside = (idx < low) | (idx >= n)
                if not negative:  # torch names the first offending index
                    bad = int(idx.reshape(-1)[outside.reshape(-1)][0].item())
                    raise IndexOutOfRangeError(f"index {bad} is out of bounds for dimension "
                                               f"{axis} with size {n}")
                bad = int(where(outside, idx, 0).abs().max().item())
                raise IndexOutOfRangeError(f"index {bad} (or {-bad}) is out of bounds for "
                                           f"dimension {axis} with size {n}")
            if negative:
                idx = where(idx < 0, idx + n, idx)
    return idx
