"""A tensor's storage, torch's way: ``storage_offset``, ``as_strided`` and the storage
objects ``untyped_storage()`` / ``storage()`` return.

A tensor's storage is the memory of the tensor that owns it (``x._base`` for views, else
``x``), which is C-contiguous from its first element. ``as_strided`` makes any strided view
of that memory; its bounds are checked here, once, for every backend, which then only builds
the view (``Backend.as_strided``).
"""
from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import needs_grad, record
from ..tensor import Tensor, _make

__all__ = ["storage_offset", "as_strided", "UntypedStorage", "TypedStorage"]


def _root(x: Tensor) -> Tensor:
    return x if x._base is None else x._base


def storage_offset(x: Tensor) -> int:
    """The offset, in elements, of ``x``'s first element in its storage (torch's)."""
    root = _root(x)
    if root is x or not x.numel():
        return 0
    be = x._device.backend
    _alloc, lo, _hi = be.memory_span(x._data)
    _alloc, base_lo, _hi = be.memory_span(root._data)
    item = x._dtype.itemsize if x._dtype.compute is x._dtype else x._data.dtype.itemsize
    first = lo + sum((n - 1) * -st * item for n, st in zip(x.shape, x.stride()) if st < 0)
    return (first - base_lo) // item


def _ints(name: str, what: str, values: Any) -> tuple[int, ...]:
    try:
        out = tuple(v.__index__() for v in values)
    except (TypeError, AttributeError):
        raise TypeError(f"{name}: {what} must be a sequence of ints, got {values!r}") from None
    return out


def as_strided(input: Tensor, size: Any, stride: Any,  # noqa: A002 - torch's name
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given ``size``, element ``stride`` and
    ``storage_offset`` (default: ``input``'s own), as torch's ``as_strided``; every element
    must lie inside the storage."""
    shape, strides = _ints("as_strided", "size", size), _ints("as_strided", "stride", stride)
    if len(shape) != len(strides):
        raise ShapeError(f"as_strided: mismatch in length of strides and shape: size "
                         f"{list(shape)} has {len(shape)} dims, stride {list(strides)} "
                         f"{len(strides)}")
    if any(n < 0 for n in shape) or any(s < 0 for s in strides):
        raise ValueError(f"as_strided: sizes and strides must be non-negative, got size "
                         f"{list(shape)} and stride {list(strides)}")
    root = _root(input)
    if not root.is_contiguous():
        raise ValueError("as_strided: this tensor's storage owner is not contiguous (it was "
                         "made from a strided array); call .contiguous() first")
    off = globals()["storage_offset"](input) if storage_offset is None else int(storage_offset)
    numel = root.numel()
    if 0 not in shape:
        need = off + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        if off < 0 or need > numel:
            raise ShapeError(
                f"as_strided: size {list(shape)}, stride {list(strides)} and storage offset "
                f"{off} need a storage of {need} elements, but it holds {numel}")
    dev = input._device
    data = dev.backend.as_strided(root._data, shape, strides, off)
    out = _make(data, dev, input._dtype)
    out._base = root
    if needs_grad(input):
        record("AsStridedBackward0", _as_strided_backward, out, (input,), geometry=(
            shape, strides, off), source=(tuple(input.shape), tuple(input.stride()),
                                          globals()["storage_offset"](input)),
               numel=numel)
    return out


def _linear_index(like: Tensor, shape: tuple, strides: tuple, offset: int) -> Tensor:
    """int64 storage indices of every element of a (shape, strides, offset) view."""
    from .creation import arange, full
    idx = full(shape, offset, dtype=_dt.int64, device=like.device)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[axis] = n
        idx = idx + arange(n, dtype=_dt.int64, device=like.device).reshape(view) * s
    return idx


def _as_strided_backward(node: Any, g: Tensor) -> tuple:
    """Scatter the view's gradient into the storage (overlapping elements add up), then
    read the input's own elements from it."""
    from .creation import zeros
    shape, strides, off = node.geometry
    src_shape, src_strides, src_off = node.source
    store = zeros(node.numel, dtype=g.dtype, device=g.device)
    if g.numel():
        idx = _linear_index(g, shape, strides, off).reshape(-1)
        store = store.index_add(0, idx, g.reshape(-1))
    src = _linear_index(g, src_shape, src_strides, src_off)
    return (store[src.reshape(-1)].reshape(src_shape),)


class UntypedStorage:
    """The bytes a tensor's storage holds (``x.untyped_storage()``): its size, address and
    device, as torch reports them. Two tensors share memory exactly when their storages'
    ``data_ptr()`` are equal."""

    def __init__(self, owner: Tensor) -> None:
        self._owner = owner

    @property
    def device(self) -> Any:
        return self._owner.device

    @property
    def dtype(self) -> Any:
        return _dt.uint8

    def nbytes(self) -> int:
        return self._owner.numel() * self._owner.element_size()

    def size(self) -> int:
        return self.nbytes()

    __len__ = size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._owner.data_ptr()

    def is_shared(self) -> bool:
        return bool(getattr(self._owner, "is_shared", lambda: False)())

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def __sizeof__(self) -> int:  # sys.getsizeof: the bytes held, as torch's storages say
        return object.__sizeof__(self) + self.nbytes()

    def __repr__(self) -> str:
        return f" [omnitensor.UntypedStorage(device={self.device}) of size {self.nbytes()}]"


class TypedStorage(UntypedStorage):
    """torch's (deprecated but still used) ``x.storage()``: the storage as elements of the
    tensor's dtype."""

    @property
    def dtype(self) -> Any:
        return self._owner.dtype

    def size(self) -> int:
        return self._owner.numel()

    __len__ = size

    def element_size(self) -> int:
        return self._owner.element_size()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._owner)

    _untyped_storage = property(untyped)

    def tolist(self) -> list:
        return self._owner.reshape(-1).tolist()

    def __getitem__(self, i: Any) -> Any:
        flat = self._owner.reshape(-1)[i]
        return flat.item() if flat.ndim == 0 else flat.tolist()

    def __repr__(self) -> str:
        return (f" {self.tolist()[:16]}\n[omnitensor.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}]")


def untyped_storage(self: Tensor) -> UntypedStorage:
    return UntypedStorage(_root(self))


def typed_storage(self: Tensor) -> TypedStorage:
    return TypedStorage(_root(self))


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """torch's ``Tensor.is_set_to``: the same storage, offset, size and stride as ``tensor``."""
    return (_root(self) is _root(tensor) and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and storage_offset(self) == storage_offset(tensor))
