"""torch's legacy storage classes (``torch.FloatStorage``, ``LongStorage``, ...) and
``Tensor.storage_type``.

As in torch, each class makes a :class:`TypedStorage` of its dtype on the cpu
(``torch.FloatStorage(3)``, ``torch.FloatStorage([1, 2])``,
``torch.FloatStorage(wrap_storage=untyped)``), and ``isinstance(s, torch.FloatStorage)`` asks
whether ``s`` is a cpu TypedStorage of float32. ``Tensor.storage_type()`` is the class of a
cpu tensor's dtype; torch has no such classes for omnitensor's other devices (opencl,
sycl), so there it is None, as torch answers for a device without them.
"""
from __future__ import annotations

from typing import Any

from . import dtypes as _dt
from .ops.storage import TypedStorage
from .tensor import Tensor

__all__ = ["LEGACY_STORAGES", "storage_type"]

_STORAGE_DTYPES = {
    "FloatStorage": _dt.float32, "DoubleStorage": _dt.float64, "HalfStorage": _dt.float16,
    "BFloat16Storage": _dt.bfloat16, "LongStorage": _dt.int64, "IntStorage": _dt.int32,
    "ShortStorage": _dt.int16, "CharStorage": _dt.int8, "ByteStorage": _dt.uint8,
    "BoolStorage": _dt.bool_, "ComplexFloatStorage": _dt.complex64,
    "ComplexDoubleStorage": _dt.complex128,
}


class _LegacyStorageMeta(type):
    """``isinstance(s, FloatStorage)``: a cpu TypedStorage of the class's dtype (torch's)."""

    dtype: _dt.DType

    def __instancecheck__(cls, instance: Any) -> bool:
        return (type(instance) is TypedStorage and instance.device.type == "cpu"
                and instance.dtype is cls.dtype)


class _LegacyStorage(metaclass=_LegacyStorageMeta):
    def __new__(cls, *args: Any, device: Any = None, dtype: Any = None,
                wrap_storage: Any = None, _internal: bool = False) -> Any:
        """TypedStorage's parameters; ``device`` and ``dtype`` are the class's own, and
        torch refuses them too."""
        for name, value in (("device", device), ("dtype", dtype)):
            if value is not None:
                raise TypeError(f"{cls.__name__}(): keyword argument '{name}' cannot be "
                                f"specified")
        if wrap_storage is not None:
            if args:
                raise TypeError(f"{cls.__name__}: no positional arguments should be given "
                                f"when using 'wrap_storage'")
            return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype)
        return TypedStorage(*args, dtype=cls.dtype, device="cpu")


LEGACY_STORAGES: dict[str, Any] = {
    name: _LegacyStorageMeta(name, (_LegacyStorage,), {
        "dtype": d, "__doc__": f"torch's legacy ``torch.{name}``: a cpu TypedStorage of "
                               f"{d.name} elements."})
    for name, d in _STORAGE_DTYPES.items()}
_BY_DTYPE = {cls.dtype: cls for cls in LEGACY_STORAGES.values()}
LEGACY_STORAGES["Storage"] = LEGACY_STORAGES["FloatStorage"]  # torch.Storage is FloatStorage


def storage_type(self: Tensor) -> Any:
    """The legacy storage class of this tensor's dtype (``torch.FloatStorage`` for a cpu
    float32 tensor); None for a dtype or device torch has none for."""
    if self.device.type != "cpu":
        return None
    return _BY_DTYPE.get(self.dtype)
