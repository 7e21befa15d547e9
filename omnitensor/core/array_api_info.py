"""``__array_namespace_info__`` and ``isdtype`` of the Array API standard (2024.12)."""
from __future__ import annotations

from typing import Any

from . import dtypes as _dt
from .device import Device, device as as_device, devices as all_devices, get_default_device

_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name or a tuple of them."""
    d = dtype if isinstance(dtype, _dt.DType) else None
    if d is None:
        raise TypeError(f"isdtype: expected a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, _dt.DType):
        return d is kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of "
                             f"{', '.join(_KINDS)}")
        return _KINDS[kind](d)
    raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple, got "
                    f"{type(kind).__name__}")


class ArrayNamespaceInfo:
    """What this namespace supports, per the standard's inspection API."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        return get_default_device()

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        f = _dt.get_default_dtype()
        return {"real floating": f, "complex floating": f.to_complex(),
                "integral": _dt.int64, "indexing": _dt.int64}

    def devices(self) -> list[Device]:
        return all_devices()

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        dev = get_default_device() if device is None else as_device(device)
        out = {}
        for d in _dt.all_dtypes:
            # float16 and bfloat16 are not standard dtypes
            if d is _dt.float16 or d is _dt.bfloat16 or not dev.supports_dtype(d):
                continue
            if kind is None or isdtype(d, kind):
                out[d.name] = d
        return out


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()
