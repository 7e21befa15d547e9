"""Shape and movement ops: views (reshape, permute, expand, ...), joins and splits.

View ops return tensors that share memory with their input, as in torch: an in-place write
through a view reaches the base. Each view remembers how to replay itself from its base
(``_view_fn``), which autograd uses when a view is modified in place.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import (as_shape, broadcast_shapes, infer_reshape, normalize_axes,
                          normalize_axis, prod)
from ..tensor import Tensor, _make
from .elementwise import _backend_failure, _mixed_devices


# --------------------------------------------------------------------- view helpers
def _as_view(x: Tensor, data: Any, replay: Callable[[Tensor], Tensor]) -> Tensor:
    out = _make(data, x._device, x._dtype)
    out._base = x if x._base is None else x._base
    prev = x._view_fn
    out._view_fn = replay if prev is None else (lambda b: replay(prev(b)))
    return out


def scatter_into_zeros(g: Tensor, shape: tuple, replay: Callable[[Tensor], Tensor]) -> Tensor:
    """A zero tensor of ``shape`` whose view ``replay(result)`` holds ``g``: the backward
    of every view op that selects part of its input. Differentiable (its backward is
    ``replay`` of the incoming gradient), so higher-order gradients work."""
    with no_grad_ctx():
        from .creation import zeros
        out = zeros(shape, dtype=g._dtype, device=g._device)
        region = replay(out)
        g._device.backend.assign(region._data, g._data)
    if needs_grad(g):
        record("ViewScatterBackward0", _scatter_into_zeros_backward, out, (g,),
               replay=replay)
    return out


def _scatter_into_zeros_backward(node: Any, gg: Tensor) -> tuple:
    return (node.replay(gg),)


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum ``g`` down to ``shape`` (undo broadcasting)."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
    out = g.sum(dim=tuple(axes), keepdim=True) if axes else g
    if lead:
        out = out.reshape(shape)
    return out


# ---------------------------------------------------------------------- reshaping
def reshape(x: Tensor, /, shape: Any, *more: Any, copy: bool | None = None) -> Tensor:
    """A tensor of the new shape (a view when possible; ``copy=True`` always copies,
    ``copy=False`` raises instead of copying). One dimension may be -1. ``x.reshape(2, 3)``
    and ``reshape(x, (2, 3))`` both work."""
    target = infer_reshape(_shape_args((shape,) + more), x.numel())
    if target == x.shape and copy is not True:
        return _as_view(x, x._data, lambda b: b) if copy is False else _alias_view(x)
    be = x._device.backend
    try:
        data = be.reshape(x._data, target, copy=copy)
    except ValueError:
        raise ShapeError(f"view size is not compatible with input tensor's size and stride "
                         f"(shape {x.shape} to {target} needs a copy); use .reshape(...) "
                         f"instead of .view(...)") from None
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("reshape", x._device, e) from None
    out = _as_view(x, data, lambda b: b.reshape(target)) if copy is not True else \
        _make(data, x._device, x._dtype)
    if needs_grad(x):
        record("ViewBackward0" if copy is False else "ReshapeAliasBackward0",
               _reshape_backward, out, (x,), shape=x.shape)
    return out


def _alias_view(x: Tensor) -> Tensor:
    out = _as_view(x, x._data, lambda b: b)
    if needs_grad(x):
        record("AliasBackward0", lambda n, g: (g,), out, (x,))
    return out


def _reshape_backward(node: Any, g: Tensor) -> tuple:
    return (g.reshape(node.shape),)


def _shape_args(shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def view(x: Tensor, *shape: Any) -> Tensor:
    """torch's ``view``: reshape that never copies (raises if strides do not allow it).
    ``view(dtype)`` is not supported (reinterpretation differs across backends)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        raise TypeError("view(dtype) reinterpretation is not supported; use .to(dtype)")
    return reshape(x, *shape, copy=False)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes ``start_dim..end_dim`` into one (torch)."""
    if x.ndim == 0:
        return x.reshape(1)
    s = normalize_axis(start_dim, x.ndim)
    e = normalize_axis(end_dim, x.ndim)
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape[:s] + (prod(x.shape[s:e + 1]),) + x.shape[e + 1:]
    return x.reshape(shape)


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = normalize_axis(dim, x.ndim)
    sizes = infer_reshape(sizes, x.shape[d])
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


def permute(x: Tensor, /, *axes: Any) -> Tensor:
    """Reorder axes (a view)."""
    axes_t = _shape_args(axes)
    if len(axes_t) != x.ndim:
        raise ShapeError(f"permute: got {len(axes_t)} axes {axes_t} for a {x.ndim}-d tensor")
    norm = tuple(normalize_axis(a, x.ndim) for a in axes_t)
    if sorted(norm) != list(range(x.ndim)):
        raise ShapeError(f"permute: axes {axes_t} are not a permutation of "
                         f"{tuple(range(x.ndim))}")
    if norm == tuple(range(x.ndim)):
        return _alias_view(x)
    data = x._device.backend.permute(x._data, norm)
    out = _as_view(x, data, lambda b: b.permute(norm))
    if needs_grad(x):
        inverse = tuple(sorted(range(len(norm)), key=norm.__getitem__))
        record("PermuteBackward0", lambda n, g: (g.permute(n.inverse),), out, (x,),
               inverse=inverse)
    return out


def permute_dims(x: Tensor, /, axes: Sequence[int]) -> Tensor:
    """Array API name of :func:`permute`."""
    return permute(x, *axes)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two axes (a view)."""
    if x.ndim == 0:
        return _alias_view(x)
    a, b = normalize_axis(dim0, x.ndim), normalize_axis(dim1, x.ndim)
    axes = list(range(x.ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return permute(x, *axes)


swapaxes = swapdims = transpose


def t(x: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims (torch)."""
    if x.ndim > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def matrix_transpose(x: Tensor, /) -> Tensor:
    """Transpose of the last two axes (Array API)."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dims, got {x.ndim}")
    return transpose(x, -2, -1)


def moveaxis(x: Tensor, source: Any, destination: Any, /) -> Tensor:
    """Move axes to new positions, keeping the others in order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same length")
    src = tuple(normalize_axis(a, x.ndim) for a in src)
    dst = tuple(normalize_axis(a, x.ndim) for a in dst)
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, *order)


movedim = moveaxis


def squeeze(x: Tensor, /, axis: Any = None) -> Tensor:
    """Array API squeeze: remove the given size-1 axes (all size-1 axes when None);
    ValueError if one has another size. (``Tensor.squeeze`` follows torch and skips
    axes whose size is not 1.)"""
    axes = normalize_axes(axis, x.ndim) if axis is not None else \
        tuple(i for i, n in enumerate(x.shape) if n == 1)
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return x.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))


def squeeze_torch(x: Tensor, dim: Any = None) -> Tensor:
    """torch's squeeze: drop size-1 axes among ``dim`` (all when None); others stay."""
    if x.ndim == 0:
        return x.reshape(())
    axes = normalize_axes(dim, x.ndim) if dim is not None else tuple(range(x.ndim))
    return x.reshape(tuple(n for i, n in enumerate(x.shape) if not (i in axes and n == 1)))


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert an axis of size 1 at ``dim``."""
    d = normalize_axis(dim, x.ndim + 1)
    return x.reshape(x.shape[:d] + (1,) + x.shape[d:])


def expand_dims(x: Tensor, /, axis: Any = 0) -> Tensor:
    """Array API ``expand_dims`` (an int or a tuple of axes of the result)."""
    if isinstance(axis, (tuple, list)):
        n = x.ndim + len(axis)
        axes = sorted(normalize_axis(a, n) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"expand_dims: repeated axis in {axis}")
        shape = list(x.shape)
        for a in axes:
            shape.insert(a, 1)
        return x.reshape(tuple(shape))
    return unsqueeze(x, axis)


# ------------------------------------------------------------------- broadcasting
def broadcast_to(x: Tensor, /, shape: Any) -> Tensor:
    """A read-only view broadcast to ``shape``."""
    shape = as_shape((shape,)) if not isinstance(shape, int) else (shape,)
    if x._data.shape == shape:
        return _alias_view(x)
    if broadcast_shapes(x._data.shape, shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}")
    if shape == x.shape:
        return _alias_view(x)
    data = x._device.backend.broadcast_to(x._data, shape)
    out = _as_view(x, data, lambda b: b.broadcast_to(shape))
    if needs_grad(x):
        record("ExpandBackward0", lambda n, g: (sum_to(g, n.shape),), out, (x,),
               shape=x.shape)
    return out


def expand(x: Tensor, *sizes: Any) -> Tensor:
    """torch's expand: -1 keeps an axis' size."""
    sizes = _shape_args(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: the number of sizes {len(sizes)} must be at least the "
                         f"number of dims {x.ndim}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s
                  for i, s in enumerate(sizes))
    return broadcast_to(x, shape)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return broadcast_to(x, other.shape)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(broadcast_to(t, shape) for t in tensors)


def broadcast_arrays(*arrays: Tensor) -> list[Tensor]:
    """Array API: broadcast against each other, as a list."""
    return list(broadcast_tensors(*arrays))


# ---------------------------------------------------------------------- copies
def contiguous(x: Tensor) -> Tensor:
    """x itself when C-contiguous, else a contiguous copy."""
    be = x._device.backend
    data = be.contiguous(x._data)
    if data is x._data:
        return x
    out = _make(data, x._device, x._dtype)
    if needs_grad(x):
        record("CloneBackward0", lambda n, g: (g,), out, (x,))
    return out


def clone(x: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own memory (differentiable)."""
    out = _make(x._device.backend.copy(x._data), x._device, x._dtype)
    if needs_grad(x):
        record("CloneBackward0", lambda n, g: (g,), out, (x,))
    return out


# --------------------------------------------------------------------- flip / roll
def flip(x: Tensor, /, axis: Any = None, *, dims: Any = None) -> Tensor:
    """Reverse the order of elements along axes (all axes when None)."""
    axes = normalize_axes(dims if dims is not None else axis, x.ndim)
    if x.ndim == 0 or not axes:
        return clone(x)
    data = x._device.backend.flip(x._data, axes)
    out = _make(x._device.backend.copy(data), x._device, x._dtype)
    if needs_grad(x):
        record("FlipBackward0", lambda n, g: (g.flip(dims=n.axes),), out, (x,), axes=axes)
    return out


def fliplr(x: Tensor) -> Tensor:
    return flip(x, dims=(1,))


def flipud(x: Tensor) -> Tensor:
    return flip(x, dims=(0,))


def roll(x: Tensor, /, shift: Any, axis: Any = None, *, dims: Any = None) -> Tensor:
    """Shift elements cyclically along axes (flattened when no axis)."""
    axis = dims if dims is not None else axis
    if axis is None:
        s = sum(shift) if isinstance(shift, (tuple, list)) else shift
        return roll(x.reshape(-1), s, 0).reshape(x.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
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


# -------------------------------------------------------------------- join / split
def _promote_all(tensors: Sequence[Tensor], op: str) -> tuple[_dt.DType, Any]:
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    d = tensors[0]._dtype
    dev = tensors[0]._device
    for t in tensors[1:]:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
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
    if dim is None:
        tensors = [t.reshape(-1) for t in tensors]
        dim = 0
    d, dev = _promote_all(tensors, "cat")
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
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise ValueError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - i) for i in range(0, n, step)] or [0]
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
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    step = max(1, -(-n // chunks))
    return split(x, step, a)


def tensor_split(x: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    a = normalize_axis(dim, x.ndim)
    n = x.shape[a]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
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
    out = x.reshape(tuple(inter)).broadcast_to(tuple(big))
    return out.reshape(tuple(r * s for r, s in zip(reps, shape)))


def repeat_tensor(x: Tensor, *sizes: Any) -> Tensor:
    """torch's ``Tensor.repeat(*sizes)`` (= tile; sizes must cover every axis)."""
    sizes = _shape_args(sizes)
    if len(sizes) < x.ndim:
        raise ShapeError(f"repeat: number of repeat dims {len(sizes)} can not be smaller than "
                         f"number of tensor dims {x.ndim}")
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
    reps = np.asarray(repeats.tolist() if isinstance(repeats, Tensor) else repeats,
                      dtype=np.int64).reshape(-1)
    if reps.size == 1:
        return repeat(x, int(reps[0]), axis=a)
    if reps.size != x.shape[a] or (reps < 0).any():
        raise ShapeError(f"repeat: repeats has {reps.size} entries for an axis of size "
                         f"{x.shape[a]}")
    from .creation import tensor
    idx = tensor(np.repeat(np.arange(x.shape[a]), reps), device=x.device)
    from .indexing import index_select
    return index_select(x, a, idx)


def repeat_interleave(x: Tensor, repeats: Any, dim: int | None = None) -> Tensor:
    """torch's repeat_interleave."""
    return repeat(x, repeats, axis=dim)


# ------------------------------------------------------------------------ padding
def pad_constant(x: Tensor, widths: Sequence[tuple[int, int]], value: Any = 0) -> Tensor:
    """Pad every axis by ``widths[i] = (before, after)`` with ``value``; negative widths
    crop."""
    widths = [tuple(int(v) for v in w) for w in widths]
    if len(widths) != x.ndim:
        raise ShapeError(f"pad: {len(widths)} (before, after) pairs for a {x.ndim}-d tensor")
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in
                 enumerate(widths))
    if any(b < 0 or a < 0 for b, a in widths):
        x = x[crop]
        widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    pos = tuple((b, a) for b, a in widths)
    if all(b == 0 and a == 0 for b, a in pos):
        return x.clone()
    from .elementwise import _PY_OF_KIND
    v = _PY_OF_KIND[x._dtype.kind](value)
    data = x._device.backend.pad(x._data, pos, v)
    out = _make(data, x._device, x._dtype)
    if needs_grad(x):
        key = tuple(slice(b, b + n) for (b, _a), n in zip(pos, x.shape))
        record("ConstantPadNdBackward0", lambda n, g: (g[n.key],), out, (x,), key=key)
    return out


# ---------------------------------------------------------------------- diagonals
def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes as the last axis (a view; torch)."""
    a, b = normalize_axis(dim1, x.ndim), normalize_axis(dim2, x.ndim)
    if a == b:
        raise ValueError("diagonal: dim1 and dim2 cannot be identical")
    data = x._device.backend.diagonal(x._data, offset, a, b)
    out = _as_view(x, data, lambda t: t.diagonal(offset, a, b))
    if needs_grad(x):
        record("DiagonalBackward0",
               lambda n, g: (scatter_into_zeros(g, n.shape, n.replay),), out, (x,),
               shape=x.shape, replay=lambda t: diagonal(t, offset, a, b))
    return out


def diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose diagonals (of the last two axes) are the last axis of ``x``."""
    n = x.shape[-1] + abs(offset)
    shape = x.shape[:-1] + (n, n)
    if (dim1, dim2) != (-2, -1):
        raise NotImplementedError("diag_embed supports dim1=-2, dim2=-1")
    return scatter_into_zeros(x, shape, lambda t: diagonal(t, offset, -2, -1))


def diag(x: Tensor, diagonal_: int = 0) -> Tensor:
    """1-D -> square matrix with x on a diagonal; 2-D -> its diagonal (torch)."""
    if x.ndim == 1:
        return diag_embed(x, diagonal_)
    if x.ndim == 2:
        return diagonal(x, diagonal_, 0, 1).clone()
    raise ValueError(f"diag: expected a 1-D or 2-D tensor, got {x.ndim}-D")
