"""Shape and movement ops: views (reshape, permute, expand, ...), joins and splits.

View ops return tensors that share memory with their input, as in torch: an in-place write
through a view reaches the base. Each view remembers how to replay itself from its base
(``_view_fn``), which autograd uses when a view is modified in place.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...errors import ShapeError
from .. import forward_ad
from ..graph import _mode, needs_grad, no_grad_ctx, record
from ..layout_dispatch import dispatch as layout_dispatch, non_strided
from ..shape_util import (as_shape, broadcast_shapes, infer_reshape, int_arg,
                          normalize_axes, normalize_axis, prod)
from ..tensor import Tensor, _make
from .elementwise import _backend_failure
from .creation import zeros


# --------------------------------------------------------------------- view helpers
def _as_view(x: Tensor, data: Any, replay: Callable[[Tensor], Tensor]) -> Tensor:
    out = _make(data, x._device, x._dtype)
    out._base = x if x._base is None else x._base
    prev = x._view_fn
    out._view_fn = replay if prev is None else (lambda b: replay(prev(b)))
    if _mode.forward:  # a view's tangent is the same view of x's tangent
        forward_ad.on_view(x, out, replay)
    return out


def scatter_into_zeros(g: Tensor, shape: tuple, replay: Callable[[Tensor], Tensor]) -> Tensor:
    """A zero tensor of ``shape`` whose view ``replay(result)`` holds ``g``: the backward
    of every view op that selects part of its input. Differentiable (its backward is
    ``replay`` of the incoming gradient), so higher-order gradients work."""
    with no_grad_ctx():
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
    target = infer_reshape(_shape_args((shape,) + more, "shape", "reshape"), x.numel())
    if target == x.shape and copy is not True:
        return _alias_view(x)  # view or reshape to the same shape: an alias, recorded
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


def _shape_args(shape: Sequence[Any], name: str = "size", op: str | None = None
                ) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))``: ints by the one rule (:func:`int_arg`: no bool, no
    float, no None), -1 left to the caller."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int_arg(s, name, op) for s in shape)


def view(x: Tensor, *shape: Any) -> Tensor:
    """torch's ``view``: reshape that never copies (raises if strides do not allow it).
    ``view(dtype)`` is not supported (reinterpretation differs across backends)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        raise TypeError("view(dtype) reinterpretation is not supported; use .to(dtype)")
    return reshape(x, *shape, copy=False)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes ``start_dim..end_dim`` into one (torch)."""
    s = normalize_axis(start_dim, x.ndim)  # a 0-d tensor takes dims -1 and 0 (torch)
    e = normalize_axis(end_dim, x.ndim)
    if x.ndim == 0:
        return x.reshape(1)
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
    axes_t = _shape_args(axes, "dims", "permute")
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
    if non_strided(x):
        return layout_dispatch("transpose", x, dim0, dim1)
    a, b = normalize_axis(dim0, x.ndim), normalize_axis(dim1, x.ndim)  # 0-d: -1 and 0 only
    if x.ndim == 0:
        return _alias_view(x)
    axes = list(range(x.ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return permute(x, *axes)


swapaxes = swapdims = transpose


def t(x: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims (torch)."""
    if non_strided(x):
        return layout_dispatch("t", x)
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
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise ValueError(f"movedim: repeated dim in `{name}` ({list(dims)} from "
                             f"{given})")
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
    axes = normalize_axes(dim, x.ndim) if dim is not None else tuple(range(x.ndim))
    if x.ndim == 0:  # after the check: a 0-d tensor takes dims -1 and 0 (torch)
        return x.reshape(())
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
    if prod(shape) == x.numel():
        # only size-1 axes are added or kept: no element repeats, so this is a reshape,
        # and a writable view as torch's expand is (NumPy's broadcast views are read-only)
        return x.reshape(shape)
    data = x._device.backend.broadcast_to(x._data, shape)
    out = _as_view(x, data, lambda b: b.broadcast_to(shape))
    if needs_grad(x):
        record("ExpandBackward0", lambda n, g: (sum_to(g, n.shape),), out, (x,),
               shape=x.shape)
    return out


def expand(x: Tensor, *sizes: Any) -> Tensor:
    """torch's expand: -1 keeps an axis' size."""
    sizes = _shape_args(sizes, "size", "expand")
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
    if non_strided(x):
        return layout_dispatch("clone", x)
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
    """Reverse dim 0 (torch; a 0-d tensor has none to reverse)."""
    if x.ndim == 0:
        raise ValueError("flipud: input must be >= 1-d")
    return flip(x, dims=(0,))


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
    """Tensors whose diagonals in the planes (``dim1``, ``dim2``) of the result are the
    last axis of ``x`` (torch); a 0-d ``x`` is one element."""
    if x.ndim == 0:
        x = x.reshape(1)
    d1, d2 = normalize_axis(dim1, x.ndim + 1), normalize_axis(dim2, x.ndim + 1)
    if d1 == d2:
        raise ValueError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, "
                         f"{dim2}")
    n = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    for pos in sorted((d1, d2)):
        shape.insert(pos, n)
    return scatter_into_zeros(x, tuple(shape), lambda t: diagonal(t, offset, d1, d2))


def diag(x: Tensor, diagonal_: int = 0) -> Tensor:
    """1-D -> square matrix with x on a diagonal; 2-D -> its diagonal (torch)."""
    if x.ndim == 1:
        return diag_embed(x, diagonal_)
    if x.ndim == 2:
        return diagonal(x, diagonal_, 0, 1).clone()
    raise ValueError(f"diag: expected a 1-D or 2-D tensor, got {x.ndim}-D")
