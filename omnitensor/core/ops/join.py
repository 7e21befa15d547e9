"""Joining and splitting: cat/stack, split/chunk/unbind (views), repeat/tile, padding."""
from __future__ import annotations

from typing import Any, Sequence

from ...errors import ShapeError
from .. import dtypes as _dt
from ..device import same_device
from ..graph import needs_grad, record
from ..shape_util import int_arg, normalize_axis
from ..tensor import Tensor, _make
from .elementwise import _PY_OF_KIND, _backend_failure, _mixed_devices
from .shape import _shape_args, clone, unsqueeze
from .creation import tensor
from .indexing import getitem

# -------------------------------------------------------------------- join / split
def _promote_all(tensors: Sequence[Tensor], op: str) -> tuple[_dt.DType, Any]:
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a sequence of Tensors, got "
                            f"{type(t).__name__} at position {i}")
    d = tensors[0]._dtype
    dev = tensors[0]._device
    for t in tensors[1:]:
        d = _dt.promote_types(d, t._dtype)
        if t._device is not dev:
            _mixed_devices(op, tensors[0], t)
    return d, dev


_UNSET: Any = object()


def cat(tensors: Sequence[Tensor], dim: int | None = 0, *, axis: Any = _UNSET) -> Tensor:
    """Join tensors along an existing axis (dtypes promote; ``axis=None`` flattens)."""
    tensors = list(tensors)
    if axis is not _UNSET:
        dim = axis
    if not tensors:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    d, dev = _promote_all(tensors, "cat")
    if dim is not None and all(t.ndim == 1 and t.shape[0] == 0 for t in tensors):
        # torch's legacy rule skips every input: nothing is joined and the dim's range
        # is never checked (its type is)
        int_arg(dim, "dim")
        return cat(tensors, None)  # (the flattened join: the same (0,) result)
    if dim is not None and any(t.ndim > 1 for t in tensors):
        # torch's legacy rule: 1-D empty tensors (shape (0,)) are skipped beside others
        kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
        if len(kept) != len(tensors):
            return cat(kept, dim).to(d) if kept else cat(tensors[:1], dim)
    if dim is None:
        tensors = [t.reshape(-1) for t in tensors]
        dim = 0
    ref = tensors[0]
    if ref.ndim == 0:
        raise ShapeError("cat: zero-dimensional tensors cannot be concatenated; use stack")
    a = normalize_axis(dim, ref.ndim)
    for t in tensors[1:]:
        if t.ndim != ref.ndim or any(p != q for i, (p, q) in enumerate(zip(t.shape, ref.shape))
                                     if i != a):
            raise ShapeError(f"cat: sizes must match except in dimension {a}; got "
                             f"{ref.shape} and {t.shape}")
    be = dev.backend
    datas = [t._data if t._dtype is d else be.astype(t._data, d.np) for t in tensors]
    try:
        data = be.concat(datas, a)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("cat", dev, e) from None
    out = _make(data, dev, d)
    if needs_grad(*tensors):
        sizes = [t.shape[a] for t in tensors]
        record("CatBackward0", _cat_backward, out, tuple(tensors), axis=a, sizes=sizes)
    return out


def _cat_backward(node: Any, g: Tensor) -> tuple:
    out, start = [], 0
    for n, need in zip(node.sizes, node.needs_input_grad):
        out.append(g.narrow(node.axis, start, n) if need else None)
        start += n
    return tuple(out)


concat = cat
concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: Any = None) -> Tensor:
    """Join same-shape tensors along a new axis."""
    tensors = list(tensors)
    if axis is not None:
        dim = axis
    if not tensors:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    _promote_all(tensors, "stack")  # types and devices, named as stack's errors
    shape = tensors[0].shape
    for t in tensors[1:]:
        if t.shape != shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got {shape} "
                             f"and {t.shape}")
    a = normalize_axis(dim, len(shape) + 1)
    return cat([unsqueeze(t, a) for t in tensors], a)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements ``start .. start+length`` along ``dim`` (a view)."""
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    start, length = int_arg(start, "start", "narrow"), int_arg(length, "length", "narrow")
    if start < 0:
        start += n
    if not (0 <= start and start + length <= n and length >= 0):
        raise IndexError(f"narrow: start {start} + length {length} exceeds dimension size "
                         f"{n}")
    key = (slice(None),) * a + (slice(start, start + length),)
    return x[key]


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim`` (that axis removed; a view)."""
    a = normalize_axis(dim, x.ndim)
    return x[(slice(None),) * a + (index,)]


def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch's split: pieces of ``split_size`` (last may be smaller) or of given sizes."""
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    if not isinstance(split_size_or_sections, (tuple, list, Tensor)):
        step = int_arg(split_size_or_sections, "split_size", "split")
        if step < 0 or step == 0 and n:
            raise ValueError(f"split: split_size must be positive (0 only for a dim of size "
                             f"0), got {step} for a dim of size {n}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if step else []
        sizes = sizes or [0]  # an empty dim splits into one empty piece (torch)
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ShapeError(f"split: sizes {sizes} do not add up to {n} along dim {a}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, a, start, s))
        start += s
    return tuple(out)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` pieces of ceil(size / chunks) (torch)."""
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise ValueError(f"chunk: chunks must be a positive integer, got {chunks!r}")
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    if n == 0:  # torch: ``chunks`` empty pieces (a split by 0 would give one)
        return tuple(narrow(x, a, 0, 0) for _ in range(chunks))
    step = -(-n // chunks)
    return split(x, step, a)


def tensor_split(x: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``indices_or_sections`` near-equal parts (an int or a 0-d tensor) or at
    the given indices (a sequence or a 1-D tensor), as torch."""
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.kind not in "iu" or ios.ndim > 1:
            raise TypeError(f"tensor_split expected tensor_indices_or_sections to be a 0-D "
                            f"or 1-D integer tensor, got a {ios.ndim}-D {ios.dtype.name} one")
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, int):
        k = ios
        if k <= 0:
            raise ValueError(f"tensor_split: number of sections must be larger than 0, got "
                             f"{k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in ios] + [n]
        sizes = [max(0, b - c) for c, b in zip(bounds[:-1], bounds[1:])]
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, a, start, s))
        start += s
    return tuple(out)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """All slices along ``dim``, that axis removed."""
    a = normalize_axis(dim, x.ndim)
    return tuple(select(x, a, i) for i in range(x.shape[a]))


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Array API name of :func:`unbind`."""
    return unbind(x, axis)


# ---------------------------------------------------------------- repeat and tile
def tile(x: Tensor, /, repetitions: Any) -> Tensor:
    """Repeat the whole tensor along each axis (Array API ``tile`` = torch ``Tensor.repeat``
    with leading axes added as needed)."""
    reps = (repetitions,) if isinstance(repetitions, int) else tuple(repetitions)
    n = max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - x.ndim) + x.shape
    inter = []
    big = []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
    final = tuple(r * s for r, s in zip(reps, shape))
    if all(r == 1 for r in reps):  # a new tensor, as torch's repeat (never a view of x)
        return x.clone().reshape(final)
    # contiguous(): the broadcast view is written out once, so the result owns writable
    # memory (a reshape of the stride-0 view could stay a read-only view of x)
    out = x.reshape(tuple(inter)).broadcast_to(tuple(big)).contiguous()
    return out.reshape(final)


def repeat_tensor(x: Tensor, *sizes: Any) -> Tensor:
    """torch's ``Tensor.repeat(*sizes)`` (= tile; sizes must cover every axis)."""
    sizes = _shape_args(sizes, "repeats", "repeat")
    if len(sizes) < x.ndim:
        raise ShapeError(f"repeat: number of repeat dims {len(sizes)} can not be smaller than "
                         f"number of tensor dims {x.ndim}")
    shape = (1,) * (len(sizes) - x.ndim) + tuple(x.shape)
    if any(r < 0 for r in sizes) and all(r * n >= 0 for r, n in zip(sizes, shape)):
        # torch checks the result's sizes: a negative repeat of an empty dim is empty
        return x.reshape(shape).broadcast_to(tuple(r * n for r, n in zip(sizes, shape))).clone()
    return tile(x, sizes)


def repeat(x: Tensor, repeats: Any, /, *, axis: int | None = None) -> Tensor:
    """Array API ``repeat`` (torch ``repeat_interleave``): repeat each element."""
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    a = normalize_axis(axis, x.ndim)
    if isinstance(repeats, int):
        if repeats < 0:
            raise ValueError("repeat: repeats must be non-negative")
        shape = x.shape
        out = unsqueeze(x, a + 1).broadcast_to(shape[:a + 1] + (repeats,) + shape[a + 1:])
        return out.reshape(shape[:a] + (shape[a] * repeats,) + shape[a + 1:])
    import numpy as np
    if isinstance(repeats, Tensor):
        if repeats._dtype.kind not in "iu":
            raise _dt.DTypeError(f"repeat: repeats must be an integer tensor, got "
                                 f"{repeats.dtype.name}")
        if repeats._device is not x._device and repeats._device.type != "cpu":
            same_device("repeat", x, repeats)
        repeats = repeats.tolist()
    reps = np.asarray(repeats)
    if reps.dtype.kind not in "iu" and reps.size:
        raise _dt.DTypeError(f"repeat: repeats must be integers, got {reps.dtype.name} "
                             f"values")
    reps = reps.astype(np.int64).reshape(-1)
    if reps.size == 1:
        return repeat(x, int(reps[0]), axis=a)
    if reps.size != x.shape[a] or (reps < 0).any():
        raise ShapeError(f"repeat: repeats has {reps.size} entries for an axis of size "
                         f"{x.shape[a]}")
    idx = tensor(np.repeat(np.arange(x.shape[a]), reps), device=x.device)
    return getitem(x, (slice(None),) * a + (idx,))  # index_select, by advanced indexing


def roll(x: Tensor, /, shift: Any, axis: Any = None, *, dims: Any = None) -> Tensor:
    """Shift elements cyclically along axes (flattened when no axis): two slices joined."""
    axis = dims if dims is not None else axis
    if isinstance(shift, (tuple, list)) and not shift:
        raise ValueError("roll: `shifts` required (got an empty sequence)")
    if axis is None:
        s = sum(shift) if isinstance(shift, (tuple, list)) else shift
        return roll(x.reshape(-1), s, 0).reshape(x.shape)
    shifts = tuple(int_arg(s, "shifts", "roll") for s in
                   (shift if isinstance(shift, (tuple, list)) else (shift,)))
    axes = tuple(int_arg(a, "dims", "roll") for a in
                 (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(shifts) == 1 and len(axes) == 1 and x.numel() == 0:
        return clone(x)  # torch: one shift of an empty tensor, any dim, is a copy
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    out = x
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim)
        n = x.shape[a]
        if n == 0:
            continue
        s %= n
        if s == 0:
            continue
        idx_tail = [slice(None)] * x.ndim
        idx_head = [slice(None)] * x.ndim
        idx_tail[a] = slice(n - s, n)
        idx_head[a] = slice(0, n - s)
        out = cat([out[tuple(idx_tail)], out[tuple(idx_head)]], a)
    return out if out is not x else clone(x)


def repeat_interleave(x: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """torch's repeat_interleave: each element (or slice along ``dim``) ``repeats`` times;
    ``repeat_interleave(repeats)`` of one integer tensor repeats its positions.
    ``output_size``, torch's hint of the result's length along ``dim``, is checked."""
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated
        from .creation import arange
        counts = x
        out = repeat(arange(counts.shape[0], device=counts.device), counts, axis=0)
    else:
        out = repeat(x, repeats, axis=dim)
    if output_size is not None:
        got = out.shape[0 if dim is None else normalize_axis(dim, out.ndim)]
        if got != output_size:
            raise ValueError(f"repeat_interleave: output_size {output_size} does not match "
                             f"the repeats' total {got}")
    return out


# ------------------------------------------------------------------------ padding
def pad_constant(x: Tensor, widths: Sequence[Sequence[int]], value: Any = 0) -> Tensor:
    """Pad every axis by ``widths[i] = (before, after)`` with ``value``; negative widths
    crop."""
    widths = [tuple(int_arg(v, "pad", "pad") for v in w) for w in widths]
    if len(widths) != x.ndim:
        raise ShapeError(f"pad: {len(widths)} (before, after) pairs for a {x.ndim}-d tensor")
    for i, ((b, a), n) in enumerate(zip(widths, x.shape)):
        if n + min(b, 0) + min(a, 0) < 0:  # torch narrows by each negative width in turn
            raise ShapeError(f"pad: negative padding ({b}, {a}) of dim {i} crops more than "
                             f"its size {n} (narrow(): length must be non-negative)")
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in
                 enumerate(widths))
    if any(b < 0 or a < 0 for b, a in widths):
        x = x[crop]
        widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    pos = tuple((b, a) for b, a in widths)
    if all(b == 0 and a == 0 for b, a in pos):
        return x.clone()
    v = _PY_OF_KIND[x._dtype.kind](value)
    data = x._device.backend.pad(x._data, pos, v)
    out = _make(data, x._device, x._dtype)
    if needs_grad(x):
        key = tuple(slice(b, b + n) for (b, _a), n in zip(pos, x.shape))
        record("ConstantPadNdBackward0", lambda n, g: (g[n.key],), out, (x,), key=key)
    return out
