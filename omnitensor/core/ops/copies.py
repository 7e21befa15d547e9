"""torch's copying variants of views (``view_copy``, ``transpose_copy``... the ``*_copy``
functions), allocation with a given layout (``empty_strided``, ``empty_permuted``,
``new_empty_strided``), ``scalar_tensor``, ``fill``/``zero_``, ``resize_``/``resize_as_``,
``constant_pad_nd`` and the ``unsafe_split``/``unsafe_chunk`` spellings.

Each ``*_copy`` is its view followed by a clone, so values, dtypes and gradients are the
view's and the result owns its memory.
"""
from __future__ import annotations

from typing import Any, Callable

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import needs_grad
from ..shape_util import as_shape, prod
from ..tensor import Tensor
from . import creation, join, shape as sh, storage
from .out_arg import write_out

__all__ = ["alias_copy", "as_strided_copy", "diagonal_copy", "expand_copy", "narrow_copy",
           "permute_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
           "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
           "detach_copy", "select_copy", "slice_copy", "split_copy", "view_as_real_copy",
           "view_as_complex_copy",
           "empty_strided", "empty_permuted", "new_empty_strided", "scalar_tensor", "fill",
           "zero_", "resize_", "resize_as_", "constant_pad_nd", "unsafe_split",
           "unsafe_chunk"]


def _cloned(result: Any) -> Any:
    if isinstance(result, Tensor):
        return result.clone()
    return tuple(r.clone() for r in result)


def _copy_of(view: Callable[..., Any], name: str) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        return write_out(name, _cloned(view(input, *args, **kwargs)), out)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"torch's ``{name}``: ``{name[:-5]}`` of ``input``, as a new tensor."
    return fn


def _view_any(x: Tensor, *shape: Any) -> Tensor:
    return sh.view(x, *shape)


def _unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    return x.unfold(dimension, size, step)


def _slice(x: Tensor, dim: int = 0, start: Any = None, end: Any = None,
           step: int = 1) -> Tensor:
    """torch's ``slice`` view: ``x[..., start:end:step, ...]`` along ``dim``."""
    d = dim % x.ndim if x.ndim else 0
    return x[(slice(None),) * d + (slice(start, end, step),)]


def _view_as_real(x: Tensor) -> Tensor:
    from .complex_ops import view_as_real
    return view_as_real(x)


def _view_as_complex(x: Tensor) -> Tensor:
    from .complex_ops import view_as_complex
    return view_as_complex(x)


alias_copy = _copy_of(lambda x: x, "alias_copy")
as_strided_copy = _copy_of(storage.as_strided, "as_strided_copy")
diagonal_copy = _copy_of(sh.diagonal, "diagonal_copy")
expand_copy = _copy_of(lambda x, size, *, implicit=False: sh.expand(x, size), "expand_copy")
narrow_copy = _copy_of(join.narrow, "narrow_copy")
permute_copy = _copy_of(sh.permute, "permute_copy")
split_with_sizes_copy = _copy_of(join.split, "split_with_sizes_copy")
squeeze_copy = _copy_of(sh.squeeze_torch, "squeeze_copy")
t_copy = _copy_of(sh.t, "t_copy")
transpose_copy = _copy_of(sh.transpose, "transpose_copy")
unbind_copy = _copy_of(join.unbind, "unbind_copy")
unfold_copy = _copy_of(_unfold, "unfold_copy")
unsqueeze_copy = _copy_of(sh.unsqueeze, "unsqueeze_copy")
view_copy = _copy_of(_view_any, "view_copy")
detach_copy = _copy_of(lambda x: x.detach(), "detach_copy")
select_copy = _copy_of(join.select, "select_copy")
slice_copy = _copy_of(_slice, "slice_copy")
split_copy = _copy_of(join.split, "split_copy")
view_as_real_copy = _copy_of(_view_as_real, "view_as_real_copy")
view_as_complex_copy = _copy_of(_view_as_complex, "view_as_complex_copy")


# ---------------------------------------------------------------- allocation
def _span(shape: tuple, stride: tuple) -> int:
    """Elements a storage needs for ``shape`` with ``stride`` (0 when it is empty)."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose elements lie ``stride`` apart in a
    storage of its own."""
    shape, strides = as_shape((size,)), as_shape((stride,))
    if len(shape) != len(strides):
        raise ShapeError(f"empty_strided: size {list(shape)} and stride {list(strides)} "
                         f"differ in length")
    base = creation.empty(max(_span(shape, strides), 1), dtype=dtype, device=device)
    out = storage.as_strided(base, shape, strides, 0)
    if requires_grad:
        out.requires_grad_(True)
    return out


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` laid out in memory with its dimensions in the
    order ``physical_layout`` (outermost first)."""
    shape, order = as_shape((size,)), as_shape((physical_layout,))
    if sorted(order) != list(range(len(shape))):
        raise ValueError(f"empty_permuted: physical_layout {list(order)} is not a "
                         f"permutation of the {len(shape)} dimensions")
    physical = creation.empty(tuple(shape[p] for p in order), dtype=dtype, device=device)
    inverse = [order.index(i) for i in range(len(order))]
    out = physical.permute(*inverse) if inverse else physical
    if requires_grad:
        out.requires_grad_(True)
    return out


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                      layout: Any = None, device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False) -> Tensor:
    """``Tensor.new_empty_strided``: :func:`empty_strided` with ``self``'s dtype and
    device unless given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` is given
    (as torch: ``scalar_tensor(3)`` is a float tensor)."""
    if isinstance(s, Tensor):
        s = s.item()
    return creation.full((), s, dtype=dtype or _dt.get_default_dtype(), device=device,
                         requires_grad=requires_grad)


# ------------------------------------------------------------------ filling
def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A tensor of ``input``'s shape and dtype holding ``value`` (a number or a 0-d
    tensor, whose gradient is the sum of the output's)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"fill only supports a 0-dimension value tensor, but got a "
                             f"tensor with {value.ndim} dimensions")
        if value.device != input.device and value.device.type == "cpu":
            value = value.to(input.device)
        v = value if value.dtype is input.dtype else value.to(input.dtype)
        return v.broadcast_to(input.shape).clone()
    return creation.full(input.shape, value, dtype=input.dtype, device=input.device)


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    """``input.zero_()``: fill with zeros in place."""
    return input.zero_()


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` in place, keeping its first elements in order;
    new elements (when it grows) are zero (torch leaves them uninitialised)."""
    shape = as_shape(sizes)
    if needs_grad(self):
        raise RuntimeError("cannot resize variables that require grad")
    n = prod(shape)
    flat = self.reshape(-1)
    if n <= flat.shape[0]:
        new = flat[:n].reshape(shape).clone()
    else:
        pad = creation.zeros(n - flat.shape[0], dtype=self.dtype, device=self.device)
        new = join.cat([flat, pad], 0).reshape(shape)
    self._data = new._data
    self._base = None  # the storage is its own now: no longer a view of another tensor
    self._view_fn = None
    self._bump_version()
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    return resize_(self, tuple(the_template.shape))


def constant_pad_nd(input: Tensor, pad: Any, value: Any = 0) -> Tensor:  # noqa: A002
    """Pad (or crop, with negative amounts) the last dimensions with ``value``:
    ``pad = (left_last, right_last, left_second_last, ...)``, as ``nn.functional.pad``."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"constant_pad_nd: the padding {list(pad)} must have an even "
                         f"length of at most twice the {input.ndim} dimensions")
    widths = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        if input.shape[d] + lo + hi < 0:
            raise ValueError(f"constant_pad_nd: padding {lo}, {hi} leaves dimension {d} "
                             f"of size {input.shape[d]} negative")
        widths[d] = (lo, hi)
    return join.pad_constant(input, widths, value)


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:  # noqa: A002
    """``split`` (omnitensor's splits are safe to use in place anyway)."""
    return join.split(input, split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:  # noqa: A002
    """``chunk`` (omnitensor's chunks are safe to use in place anyway)."""
    return join.chunk(input, chunks, dim)


def bind(T: Any) -> None:
    """Tensor methods of this module."""
    T.new_empty_strided = new_empty_strided
    T.resize_, T.resize_as_ = resize_, resize_as_
    T.unsafe_split, T.unsafe_chunk = unsafe_split, unsafe_chunk
