"""``omnitensor.cuda``: torch.cuda-style queries for the ``cuda`` backend (CuPy, also its
ROCm build). Every function works without CuPy or a GPU (``is_available()`` is False)."""
from __future__ import annotations

from typing import Any

from .backends import registry

__all__ = ["is_available", "device_count", "synchronize", "current_device",
           "get_device_name", "memory_allocated", "memory_reserved", "empty_cache", "is_rocm",
           "unavailable_reason"]


def _backend() -> Any:
    be, _why = registry.try_backend("cuda")
    return be


def is_available() -> bool:
    """True when CuPy is installed and sees at least one GPU."""
    return _backend() is not None


def unavailable_reason() -> str | None:
    """Why ``is_available()`` is False (what to install or check), else None."""
    _be, why = registry.try_backend("cuda")
    return why


def device_count() -> int:
    be = _backend()
    return be.device_count() if be is not None else 0


def _index(device: Any) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from .core.device import device as as_device
    return as_device(device).index


def current_device() -> int:
    be = _backend()
    if be is None:
        return 0
    import cupy
    return cupy.cuda.Device().id


def synchronize(device: Any = None) -> None:
    """Wait for every op enqueued on the device."""
    be = _backend()
    if be is not None:
        be.synchronize(_index(device))


def get_device_name(device: Any = None) -> str:
    be = _backend()
    if be is None:
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")
    return be.device_info(_index(device))["name"]


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors in CuPy's memory pool on the device."""
    be = _backend()
    return be.memory_allocated(_index(device)) if be is not None else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes the memory pool holds from the driver (allocated + cached)."""
    be = _backend()
    return be.memory_reserved(_index(device)) if be is not None else 0


def empty_cache() -> None:
    """Return cached, unused pool memory to the driver."""
    be = _backend()
    if be is not None:
        be.empty_cache()


def is_rocm() -> bool:
    """True for CuPy's ROCm (HIP) build."""
    be = _backend()
    return bool(be is not None and be.is_rocm)
