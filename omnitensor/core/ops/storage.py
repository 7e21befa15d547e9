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
from ..tensor import Tensor, _make, host_array

__all__ = ["storage_offset", "as_strided", "slice_inverse", "UntypedStorage", "TypedStorage"]


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



def slice_inverse(input: Tensor, src: Tensor, dim: int = 0,  # noqa: A002 - torch's name
                  start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    """aten's ``slice_inverse`` (functionalization's inverse of ``slice``): ``input``, a
    slice ``src[..., start:end:step, ...]`` along ``dim``, viewed back with ``src``'s
    geometry: ``input.as_strided(src.shape, src.stride(), src.storage_offset())``, a view
    of ``input``'s storage, as in aten (``dim``/``start``/``end``/``step`` describe the
    slice; the view needs only ``src``'s geometry). The gradient reaching ``input`` is the
    slice of the result's gradient."""
    if not isinstance(src, Tensor):
        raise TypeError(f"slice_inverse(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    try:
        return as_strided(input, tuple(src.shape), src.stride(),
                          globals()["storage_offset"](src))
    except ShapeError as e:  # input's storage cannot hold src's geometry: aten's RuntimeError
        raise RuntimeError(f"slice_inverse: {e}") from None

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


def _storage_owner(args: tuple, dtype: Any, device: Any, what: str) -> Tensor:
    """The root tensor a new storage owns: ``()`` (empty), ``(size,)`` (zeros: torch leaves
    them uninitialized) or ``(sequence,)``, of ``dtype`` on ``device``."""
    from .creation import tensor, zeros
    if len(args) > 1:
        raise TypeError(f"{what}() takes at most one positional argument (a size or a "
                        f"sequence of data), got {len(args)}")
    if not args:
        return zeros(0, dtype=dtype, device=device)
    arg = args[0]
    if isinstance(arg, int) and not isinstance(arg, bool):
        if arg < 0:
            raise ValueError(f"{what}(size): size must be non-negative, got {arg}")
        return zeros(arg, dtype=dtype, device=device)
    if isinstance(arg, (list, tuple, range)):
        return tensor(list(arg), dtype=dtype, device=device).reshape(-1)
    raise TypeError(f"{what}() takes a size (int) or a sequence of data, got "
                    f"{type(arg).__name__}")


class UntypedStorage:
    """The bytes a tensor's storage holds (``x.untyped_storage()``): its size, address and
    device, as torch reports them. Two tensors share memory exactly when their storages'
    ``data_ptr()`` are equal. ``UntypedStorage(size)`` / ``UntypedStorage(bytes_seq)`` make
    a new one of uint8 elements."""

    _owner: Tensor

    def __init__(self, *args: Any, device: Any = None) -> None:
        self._owner = _storage_owner(args, _dt.uint8, device, "UntypedStorage")

    @classmethod
    def _of(cls, owner: Tensor) -> Any:
        """The storage of the root tensor ``owner`` (no copy)."""
        out = cls.__new__(cls)
        out._owner = owner
        return out

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

    def tolist(self) -> list:
        """The bytes, as ints (a host copy of the owner's elements in its dtype's layout)."""
        return list(memoryview(host_array(self._owner).tobytes()))

    def __getitem__(self, i: Any) -> Any:
        return self.tolist()[i]

    def is_pinned(self, device: Any = None) -> bool:
        """Whether the owner's memory is page-locked (``Tensor.pin_memory``)."""
        owner = self._owner if self._owner._base is None else self._owner._base
        return bool(owner.__dict__.get("_pinned", False))

    def __sizeof__(self) -> int:  # sys.getsizeof: the bytes held, as torch's storages say
        return object.__sizeof__(self) + self.nbytes()

    def __repr__(self) -> str:
        return f" [omnitensor.UntypedStorage(device={self.device}) of size {self.nbytes()}]"


class TypedStorage(UntypedStorage):
    """torch's (deprecated but still used) ``x.storage()``: the storage as elements of the
    tensor's dtype. ``TypedStorage(size_or_data, dtype=, device=)`` makes a new one;
    ``TypedStorage(wrap_storage=untyped, dtype=)`` views an untyped storage's memory (of
    that dtype: reinterpreting other bytes, torch's view(dtype), is not supported)."""

    def __init__(self, *args: Any, device: Any = None, dtype: Any = None,
                 wrap_storage: Any = None, _internal: bool = False) -> None:
        if wrap_storage is None:
            d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)
            self._owner = _storage_owner(args, d, device, "TypedStorage")
            return
        if args:
            raise TypeError("TypedStorage: no positional arguments should be given when "
                            "using 'wrap_storage'")
        if device is not None:
            raise TypeError("TypedStorage: argument 'device' should not be specified when "
                            "'wrap_storage' is given")
        if dtype is None:
            raise TypeError("TypedStorage: argument 'dtype' must be specified with "
                            "'wrap_storage'")
        if type(wrap_storage) is not UntypedStorage:
            raise TypeError(f"TypedStorage: argument 'wrap_storage' must be UntypedStorage, "
                            f"but got {type(wrap_storage).__name__}")
        d, owner = _dt.as_dtype(dtype), wrap_storage._owner
        if owner.dtype is not d:
            raise TypeError(
                f"TypedStorage(wrap_storage=..., dtype={d.name}): this storage holds "
                f"{owner.dtype.name} elements; reinterpreting its bytes as {d.name} "
                f"(torch's view(dtype)) is not supported by omnitensor")
        self._owner = owner

    @property
    def dtype(self) -> Any:
        return self._owner.dtype

    def size(self) -> int:
        return self._owner.numel()

    __len__ = size

    def element_size(self) -> int:
        return self._owner.element_size()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage._of(self._owner)

    _untyped_storage = property(untyped)

    def tolist(self) -> list:
        return self._owner.reshape(-1).tolist()

    def __getitem__(self, i: Any) -> Any:
        flat = self._owner.reshape(-1)[i]
        return flat.item() if flat.ndim == 0 else flat.tolist()

    def __setitem__(self, i: Any, value: Any) -> None:
        self._owner.reshape(-1)[i] = value  # the owner is contiguous: reshape is a view

    def __repr__(self) -> str:
        return (f" {self.tolist()[:16]}\n[omnitensor.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}]")


def untyped_storage(self: Tensor) -> UntypedStorage:
    return UntypedStorage._of(_root(self))


def typed_storage(self: Tensor) -> TypedStorage:
    return TypedStorage._of(_root(self))


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """torch's ``Tensor.is_set_to``: the same storage, offset, size and stride as ``tensor``."""
    return (_root(self) is _root(tensor) and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and storage_offset(self) == storage_offset(tensor))


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _set_view(self: Tensor, source: Any, storage_offset: int, size: Any,
              stride: Any) -> Tensor:
    """The tensor ``self`` becomes in ``set_``: a view of ``source``'s root."""
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype.name} to a tensor "
                               f"of type {self.dtype.name}")
        if size is None:
            return source
        root = _root(source)
    else:
        root = source._owner
        if root.dtype is not self.dtype:
            raise RuntimeError(
                f"Expected a Storage of type {self.dtype.name} or an UntypedStorage of "
                f"{self.dtype.name} elements, but got {root.dtype.name} elements (omnitensor "
                f"does not reinterpret bytes as another dtype)")
        if size is None:
            size = (root.numel(),)
    shape = _ints("set_", "size", size)
    strides = _contiguous_strides(shape) if stride is None else _ints("set_", "stride", stride)
    if root._device is not self._device:
        raise RuntimeError(f"set_: the source is on {root._device}, the tensor on "
                           f"{self._device}")
    return as_strided(root._alias(), shape, strides, storage_offset)  # no history


def set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Any = None,
         stride: Any = None) -> Tensor:
    """torch's ``Tensor.set_``: make ``self`` alias ``source`` (a tensor: its storage, offset,
    size and stride; a storage: its elements from ``storage_offset`` with ``size`` and
    ``stride``, contiguous by default), or an empty tensor with no argument. Writes through
    either are seen by the other. The elements must lie inside the storage (torch would
    grow it), and the dtype must be ``self``'s. Views taken of ``self`` before it is set keep
    their elements, but their ``storage_offset``/``is_set_to`` then answer against ``self``'s
    new storage (a view knows its storage only as the tensor it was taken of)."""
    if self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if size is None and (storage_offset != 0 or stride is not None):
        raise TypeError("set_(): storage_offset and stride need a size: expected set_(), "
                        "set_(source) or set_(source, storage_offset, size, stride=None)")
    if source is None:
        from .creation import empty
        view = empty(0, dtype=self.dtype, device=self.device)
    elif isinstance(source, (Tensor, UntypedStorage)):
        view = _set_view(self, source, storage_offset, size, stride)
    else:
        raise TypeError(f"set_(): source must be a Tensor or a storage, got "
                        f"{type(source).__name__}")
    root = _root(view)
    self._data = view._data
    self._base = None if root is self else root
    self._bump_version()
    return self
