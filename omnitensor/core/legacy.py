"""torch's older tensor idioms that real scripts still use, in one place.

* ``Size``: the shape type (a tuple with ``numel()``), returned by ``x.size()``;
* the legacy tensor types ``FloatTensor``, ``LongTensor``, ... as constructors
  (``torch.LongTensor([1, 2])``, ``torch.FloatTensor(2, 3)``) and for ``isinstance`` checks
  (a cpu tensor of that dtype, as torch's; ``torch.cuda.FloatTensor`` is the CUDA one);
* ``Tensor.type()`` (the legacy type name, ``'torch.FloatTensor'``) and
  ``Tensor.type(dtype_or_name)`` (a conversion);
* the device predicates ``is_cpu``/``is_cuda``/``is_xpu``/``is_mps``/``is_opencl``/``is_sycl``
  and the layout facts (``is_sparse``... all False: omnitensor tensors are strided);
* ``data_ptr()``.

The legacy type names keep torch's spelling (``'torch.FloatTensor'``), because scripts
compare them with string literals written for torch.
"""
from __future__ import annotations

from typing import Any

from . import dtypes as _dt
from .shape_util import Size
from .tensor import Tensor

__all__ = ["Size", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "LEGACY_TYPES", "bind"]


# legacy name -> dtype (the device part of a name is 'torch.' for cpu, 'torch.cuda.'...)
_LEGACY_DTYPES = {
    "FloatTensor": _dt.float32, "DoubleTensor": _dt.float64, "HalfTensor": _dt.float16,
    "BFloat16Tensor": _dt.bfloat16, "LongTensor": _dt.int64, "IntTensor": _dt.int32, "ShortTensor": _dt.int16,
    "CharTensor": _dt.int8, "ByteTensor": _dt.uint8, "BoolTensor": _dt.bool_,
}
_NAME_OF_DTYPE = {d: n for n, d in _LEGACY_DTYPES.items()}


class _LegacyType(type):
    """Metaclass: ``isinstance(x, FloatTensor)`` is "x is a float32 tensor on the class's
    device type", as torch answers."""

    # set by _make_type on each class (declared for type checkers)
    dtype: _dt.DType
    device_type: str
    legacy_name: str

    def __instancecheck__(cls, obj: Any) -> bool:
        if not (isinstance(obj, Tensor) and obj.dtype is cls.dtype):
            return False
        if cls.device_type == "cuda":  # torch.cuda.FloatTensor: the device `cuda` names
            return obj.is_cuda
        return obj.device.type == cls.device_type

    def __repr__(cls) -> str:
        return f"<class '{cls.legacy_name}'>"


def _is_shape(args: tuple) -> bool:
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


class _LegacyTensor(metaclass=_LegacyType):
    dtype: _dt.DType = _dt.float32
    device_type = "cpu"
    legacy_name = "torch.FloatTensor"

    def __new__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[misc]
        from .ops.creation import empty, tensor
        dev = device if device is not None else (None if cls.device_type == "cpu"
                                                 else cls.device_type)
        if dev is None:
            dev = "cpu"
        if len(args) == 1 and isinstance(args[0], tuple) and _is_shape(args[0]):
            args = tuple(args[0])  # FloatTensor(torch.Size([2, 3]))
        if _is_shape(args):  # FloatTensor(2, 3): uninitialised, as torch's
            return empty(args, dtype=cls.dtype, device=dev)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data.dtype is not cls.dtype:
                    raise TypeError(f"{cls.legacy_name}(tensor) needs a {cls.dtype.name} tensor, "
                                    f"got {data.dtype.name}; use tensor.to({cls.dtype.name})")
                return data
            return tensor(data, dtype=cls.dtype, device=dev)
        raise TypeError(f"{cls.legacy_name}() takes sizes (ints) or one sequence of data, got "
                        f"{', '.join(type(a).__name__ for a in args)}")


def _make_type(name: str, dtype: _dt.DType, device_type: str = "cpu") -> _LegacyType:
    prefix = "torch." if device_type == "cpu" else f"torch.{device_type}."
    return _LegacyType(name, (_LegacyTensor,), {
        "dtype": dtype, "device_type": device_type, "legacy_name": prefix + name,
        "__doc__": f"torch's legacy ``{prefix}{name}``: builds {dtype.name} tensors on "
                   f"{device_type}; ``isinstance`` tests dtype and device type."})


LEGACY_TYPES = {name: _make_type(name, d) for name, d in _LEGACY_DTYPES.items()}
CUDA_LEGACY_TYPES = {name: _make_type(name, d, "cuda") for name, d in _LEGACY_DTYPES.items()}
FloatTensor = LEGACY_TYPES["FloatTensor"]
DoubleTensor = LEGACY_TYPES["DoubleTensor"]
HalfTensor = LEGACY_TYPES["HalfTensor"]
BFloat16Tensor = LEGACY_TYPES["BFloat16Tensor"]
LongTensor = LEGACY_TYPES["LongTensor"]
IntTensor = LEGACY_TYPES["IntTensor"]
ShortTensor = LEGACY_TYPES["ShortTensor"]
CharTensor = LEGACY_TYPES["CharTensor"]
ByteTensor = LEGACY_TYPES["ByteTensor"]
BoolTensor = LEGACY_TYPES["BoolTensor"]


def legacy_type_name(x: Tensor) -> str:
    """``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``, ``'torch.opencl.FloatTensor'``."""
    name = _NAME_OF_DTYPE.get(x.dtype)
    if name is None:  # complex and unsigned wider types have no legacy class in torch
        name = x.dtype.name.capitalize() + "Tensor"
    dev = x.device.type
    return ("torch." if dev == "cpu" else f"torch.{dev}.") + name


def _parse_type_name(name: str) -> tuple[_dt.DType, str | None]:
    parts = name.split(".")
    if len(parts) < 2 or parts[0] not in ("torch", "omnitensor") or \
            parts[-1] not in _LEGACY_DTYPES:
        raise ValueError(f"invalid type: {name!r} (expected a legacy type name such as "
                         f"'torch.FloatTensor' or 'torch.cuda.LongTensor')")
    dev = parts[1] if len(parts) == 3 else None
    return _LEGACY_DTYPES[parts[-1]], dev


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False,
                **_: Any) -> Any:
    """No argument: the legacy type name (``'torch.FloatTensor'``). With a dtype, a legacy
    type or its name: this tensor converted (itself when nothing changes)."""
    if dtype is None:
        return legacy_type_name(self)
    device = None
    if isinstance(dtype, str):
        dtype, device = _parse_type_name(dtype)
    elif isinstance(dtype, _LegacyType):
        dtype, device = dtype.dtype, dtype.device_type
    if device is not None and device != self.device.type:
        if device != "cpu" and self.device.type != "cpu":
            raise ValueError(f"type(): cannot move a {self.device} tensor to {device} through "
                             f"a legacy type name; use .to(device)")
        return self.to(device=device, dtype=dtype)
    return self.to(dtype)


def data_ptr(self: Tensor) -> int:
    """The address of the first element where the device has addresses (cpu, CUDA, SYCL USM);
    on OpenCL, which has no addresses, the buffer handle plus the byte offset: equal for
    tensors sharing memory at the same spot, distinct otherwise, as scripts compare it."""
    arr = self._data
    for proto in ("__array_interface__", "__cuda_array_interface__",
                  "__sycl_usm_array_interface__"):
        iface = getattr(arr, proto, None)  # the standard array-exchange protocols
        if iface is not None:
            return int(iface["data"][0] or 0)
    buf = getattr(arr, "data", None)
    handle = getattr(buf, "int_ptr", None)  # a pyopencl memory object
    if handle is not None:
        return int(handle) + int(getattr(arr, "offset", 0)) * self.dtype.itemsize
    raise RuntimeError(f"data_ptr() is not available for tensors on {self.device}")


class _Layout:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"omnitensor.{self.name}"


strided = _Layout("strided")


def _device_is(type_: str) -> property:
    return property(lambda self: self._device.type == type_,
                    doc=f"True when the tensor is on a {type_} device.")


def bind(T: Any) -> None:
    """Bind the legacy methods and predicates on :class:`Tensor` (from ``core/methods``)."""
    T.type = tensor_type
    T.data_ptr = data_ptr
    for t in ("cpu", "opencl", "sycl"):
        setattr(T, f"is_{t}", _device_is(t))
    T.is_xpu = _device_is("xpu")  # omnitensor names Intel GPUs 'sycl'; torch's xpu is none
    for flag in ("is_mps", "is_meta", "is_sparse", "is_sparse_csr", "is_quantized",
                 "is_mkldnn", "is_nested", "is_vulkan", "is_ipu", "is_hpu", "is_mtia"):
        setattr(T, flag, property(lambda self: False))
    T.layout = property(lambda self: strided)
