"""Moving tensors between devices and dtypes: ``to``, ``astype``, ``cpu``, ``float()``..."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..device import Device, device as as_device
from ..graph import needs_grad, record
from ..tensor import Tensor, _make, host_array
from .creation import check_dtype, resolve_device
from .elementwise import _backend_failure


def _cast(x: Tensor, d: _dt.DType, copy: bool = False) -> Tensor:
    if d is x._dtype:
        return x.clone() if copy else x
    check_dtype(x._device, d)
    be = x._device.backend
    try:
        data = be.astype(x._data, d.np)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("astype", x._device, e) from None
    out = _make(data, x._device, d)
    if needs_grad(x) and d.kind in "fc":
        record("ToCopyBackward0", _cast_backward, out, (x,), src=x._dtype)
    return out


def _cast_backward(node: Any, g: Tensor) -> tuple:
    src = node.src
    if src.kind == "f" and g._dtype.kind == "c":
        g = g.real
    return (g.to(src),)


def _move(x: Tensor, dev: Device) -> Tensor:
    if dev is x._device:
        return x
    check_dtype(dev, x._dtype)
    src_be, dst_be = x._device.backend, dev.backend
    try:
        # None: no direct path; storage dtypes go through the host, whose copy is the
        # dtype's own (a backend may hold bfloat16 widened: core.tensor.host_array)
        data = None if x._dtype.compute is not x._dtype else \
            dst_be.transfer_from(x._data, src_be, dev.index)
        if data is None:
            host = host_array(x)
            if dev.type == "cpu":
                host = host.copy() if x._device.type == "cpu" else host
            data = dst_be.from_numpy(host, dev.index)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(f"transfer {x._device} -> {dev}", dev, e) from None
    out = _make(data, dev, x._dtype)
    if needs_grad(x):
        record("ToCopyBackward0", _move_backward, out, (x,), src_device=x._device)
    return out


def _move_backward(node: Any, g: Tensor) -> tuple:
    return (_move(g, node.src_device),)


def parse_to(*args: Any, device: Any = None, dtype: Any = None, non_blocking: bool = False,
             copy: bool = False, memory_format: Any = None) -> tuple[Any, Any, bool, bool, Any]:
    """``(device, dtype, non_blocking, copy, memory_format)`` from ``to``'s arguments, as
    given (absent parts None): ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(other)``, keywords, and torch's positional ``to(device, dtype, non_blocking,
    copy)`` / ``to(dtype, non_blocking, copy)`` (the bools after the device/dtype)."""
    flags = []
    for a in args:
        if isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (Device, str, int)) and not (isinstance(a, str) and _is_dtype_name(a)):
            device = a
        elif a is not None:
            dtype = a
    if len(flags) > 2:
        raise TypeError("to(): expected at most two bool arguments (non_blocking, copy)")
    if flags:
        non_blocking = flags[0]
    if len(flags) == 2:
        copy = flags[1]
    return device, dtype, bool(non_blocking), bool(copy), memory_format


def to(x: Tensor, *args: Any, device: Any = None, dtype: Any = None, non_blocking: bool = False,
       copy: bool = False, memory_format: Any = None) -> Tensor:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(other)``: a tensor on
    that device with that dtype (x itself when nothing changes, unless ``copy``). torch's
    positional forms ``to(device, dtype, non_blocking, copy)`` and ``to(dtype,
    non_blocking, copy)`` are accepted: the bools after the device/dtype are those two."""
    device, dtype, _, copy, _ = parse_to(*args, device=device, dtype=dtype,
                                         non_blocking=non_blocking, copy=copy,
                                         memory_format=memory_format)
    out = x
    if device is not None:
        out = _move(out, resolve_device(device))
    if dtype is not None:
        out = _cast(out, _dt.as_dtype(dtype))
    if copy and out is x:
        out = x.clone()
    return out


def _is_dtype_name(s: str) -> bool:
    try:
        _dt.as_dtype(s)
        return True
    except _dt.DTypeError:
        return False


def astype(x: Tensor, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """Array API ``astype``: a copy in ``dtype`` (no copy when ``copy=False`` and nothing
    changes)."""
    out = x if device is None else _move(x, resolve_device(device))
    out = _cast(out, _dt.as_dtype(dtype), copy=copy and out is x)
    return out


def cpu(x: Tensor) -> Tensor:
    """This tensor on the cpu device."""
    return _move(x, as_device("cpu"))


def cuda(x: Tensor, device: Any = None, non_blocking: bool = False,
         memory_format: Any = None) -> Tensor:
    """This tensor on the device ``cuda`` names (the current CUDA device; under the torch
    alias without CUDA, the accelerator: see :mod:`omnitensor.core.accelerators`)."""
    if isinstance(device, int):
        device = f"cuda:{device}"
    return _move(x, resolve_device(device or "cuda"))


def type_as(x: Tensor, other: Tensor) -> Tensor:
    return _cast(x, other.dtype)


def _caster(d: _dt.DType) -> Any:
    def method(x: Tensor, memory_format: Any = None) -> Tensor:
        return _cast(x, d)
    method.__doc__ = f"This tensor as {d.name}."
    return method


CAST_METHODS = {
    "float": _caster(_dt.float32), "double": _caster(_dt.float64),
    "half": _caster(_dt.float16), "bfloat16": _caster(_dt.bfloat16), "int": _caster(_dt.int32), "long": _caster(_dt.int64),
    "short": _caster(_dt.int16), "char": _caster(_dt.int8), "byte": _caster(_dt.uint8),
    "bool": _caster(_dt.bool_), "cfloat": _caster(_dt.complex64),
    "cdouble": _caster(_dt.complex128),
}
